import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock, type ManualClock } from '../../src/lib/clock-manual.js'
import { isAppError } from '../../src/lib/errors.js'
import { principals } from '../../src/lib/principal.js'
import { brick, documentOf } from '../../src/modules/blueprints/document/test-document.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

/**
 * The two-phase install protocol over HTTP (spec: Blueprint endpoints, decision 070): open answers pending
 * rows and the calls to make; the opener (only) settles, each outcome verified by a read-back here; the
 * hourly sweep turns a run no one settled into partial. Who may: 401 anonymous on all six routes,
 * install_needs_person for a key before grants, 404 for another project's install id.
 */

const clock: ManualClock = createManualClock(Math.floor(Date.now() / 1000) * 1000)
let server: TestServer
let owner: Account
let admin: Account
const INSTALLS = '/api/v1/blueprints/installs'
let n = 0
const fresh = () => `t${Date.now().toString(36).slice(-4)}${n++}`

beforeAll(async () => {
  server = await startServer({}, { clock })
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
})
afterAll(async () => {
  await server?.stop()
})

const notes = documentOf([
  brick('collection id=notes', {
    name: '${params.prefix}_notes',
    accessPreset: 'private',
    fields: [{ name: 'title', type: 'text', required: true, unique: false, indexed: false }],
  }),
  brick('records id=seed needs=notes', { collection: '${params.prefix}_notes', key: 'title', rows: [{ title: 'Hi' }] }),
  brick('view id=all needs=notes', {
    name: 'All ${params.prefix}',
    collection: '${params.prefix}_notes',
    shared: true,
  }),
])

const request = (method: string, path: string, body?: unknown, token = owner.token, headers?: Record<string, string>) =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) })

interface Action {
  id: string
  brickId: string
  method: string
  path: string
  body: unknown
}

/** Makes the calls of an open run as a client would. */
async function applyActions(actions: Action[], token = owner.token): Promise<void> {
  for (const action of actions) {
    const reply = await request(action.method, action.path, action.body, token)
    expect(reply.status, `${action.method} ${action.path}: ${reply.text}`).toBeLessThan(300)
  }
}

describe('the two-phase protocol', () => {
  it('opens with pending rows and calls, and settles each row from its read-back', async () => {
    const prefix = fresh()
    const opened = await request('POST', INSTALLS, { source: notes, params: { prefix } })
    expect(opened.status, opened.text).toBe(201)
    const run = opened.body.data
    expect(run).toMatchObject({ status: 'in_progress', mode: 'client', namespace: prefix })
    expect(run.resources.map((r: { brickId: string; status: string }) => [r.brickId, r.status])).toEqual([
      ['notes', 'pending'],
      ['seed', 'pending'],
      ['all', 'pending'],
    ])
    expect(run.resources[0]).toMatchObject({ brickKind: 'collection', resourceKind: 'collection', resourceRef: null })
    expect(run.actions.map((a: Action) => `${a.brickId} ${a.method} ${a.path}`)).toEqual([
      'notes POST /api/v1/collections',
      `seed POST /api/v1/collections/${prefix}_notes/records`,
      'all POST /api/v1/views',
    ])
    // The opener makes the calls; nothing is settled until it says so.
    await applyActions(run.actions)
    expect((await request('GET', `${INSTALLS}/${run.id}`)).body.data.status).toBe('in_progress')

    // Only the opener settles; a key never does.
    const ids = run.resources.map((r: { id: string }) => r.id) as string[]
    const byAdmin = await request('POST', `${INSTALLS}/${run.id}/settle`, { outcomes: [], final: true }, admin.token)
    expect(byAdmin.status).toBe(403)
    expect(byAdmin.body.error).toBe('forbidden')
    const unknown = await request('POST', `${INSTALLS}/${run.id}/settle`, {
      outcomes: [{ resourceId: 'nope', ok: true }],
    })
    expect(unknown.status).toBe(400)

    const settled = await request('POST', `${INSTALLS}/${run.id}/settle`, {
      outcomes: ids.map((resourceId) => ({ resourceId, ok: true })),
      final: true,
    })
    expect(settled.status, settled.text).toBe(200)
    expect(settled.body.data.status).toBe('complete')
    for (const row of settled.body.data.resources) {
      expect(row, row.brickId).toMatchObject({ status: 'settled', error: null })
      expect(row.resourceRef).toEqual(expect.any(String))
    }
    // The hashes are the server's: a plan of the same document finds every resource as it was read back.
    const plan = await request('POST', '/api/v1/blueprints/plan', { source: notes, params: { prefix } })
    expect(plan.body.data.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['NOOP', 'NOOP', 'NOOP'])
    for (const v of plan.body.data.verdicts)
      expect(v.contentHash).toBe(
        settled.body.data.resources.find((r: { brickId: string }) => r.brickId === v.brickId).contentHash,
      )
    const again = await request('POST', `${INSTALLS}/${run.id}/settle`, { outcomes: [], final: true })
    expect(again.status).toBe(409)
  })

  it('fails a row reported ok whose resource is absent, and one reported failed; skipped stays skipped', async () => {
    const prefix = fresh()
    const opened = await request('POST', INSTALLS, { source: notes, params: { prefix } })
    const run = opened.body.data
    // Only the collection is made; the seed is reported ok anyway, the view as failed.
    await applyActions(run.actions.slice(0, 1))
    const [notesRow, seedRow, viewRow] = run.resources as { id: string }[]
    const settled = await request('POST', `${INSTALLS}/${run.id}/settle`, {
      outcomes: [
        { resourceId: notesRow!.id, ok: true },
        { resourceId: seedRow!.id, ok: true },
        { resourceId: viewRow!.id, ok: false, error: 'the network went away' },
      ],
    })
    expect(settled.status, settled.text).toBe(200)
    expect(settled.body.data.status).toBe('in_progress')
    expect(
      settled.body.data.resources.map((r: { status: string; error: string | null }) => [r.status, r.error]),
    ).toEqual([
      ['settled', null],
      ['failed', 'absent on read-back'],
      ['failed', 'the network went away'],
    ])
    const final = await request('POST', `${INSTALLS}/${run.id}/settle`, { outcomes: [], final: true })
    expect(final.body.data.status).toBe('partial')
    // A later install of the same document picks up where it stopped.
    const resumed = await request('POST', `${INSTALLS}?apply=true`, { source: notes, params: { prefix } })
    expect(resumed.status, resumed.text).toBe(201)
    expect(resumed.body.data.resources.map((r: { verdict: string; status: string }) => [r.verdict, r.status])).toEqual([
      ['NOOP', 'settled'],
      ['CREATE', 'settled'],
      ['CREATE', 'settled'],
    ])
  })

  it('the hourly sweep turns a run no one settled into partial, its pending rows failed', async () => {
    const prefix = fresh()
    const opened = await request('POST', INSTALLS, { source: notes, params: { prefix } })
    const run = opened.body.data
    expect(await server.app.services.blueprints.sweep()).toBe(0)
    await clock.advance(61 * 60_000)
    expect(await server.app.services.blueprints.sweep()).toBeGreaterThanOrEqual(1)
    const swept = (await request('GET', `${INSTALLS}/${run.id}`)).body.data
    expect(swept.status).toBe('partial')
    for (const row of swept.resources)
      expect(row).toMatchObject({ status: 'failed', error: expect.stringContaining('outcome unknown') })
  })
})

describe('who may', () => {
  const routes = (id: string): [string, string, unknown][] => [
    ['POST', INSTALLS, { source: notes }],
    ['POST', `${INSTALLS}/${id}/settle`, { outcomes: [] }],
    ['GET', INSTALLS, undefined],
    ['GET', `${INSTALLS}/${id}`, undefined],
    ['GET', `${INSTALLS}/${id}/uninstall`, undefined],
    ['POST', `${INSTALLS}/${id}/uninstall`, {}],
  ]

  it('refuses anonymous callers on all six routes (401)', async () => {
    for (const [method, path, body] of routes('x1')) {
      const reply = await server.request(method, path, body === undefined ? {} : { body })
      expect(reply.status, `${method} ${path}`).toBe(401)
    }
  })

  it('refuses a service key before its grants (install_needs_person) to open, settle and uninstall', async () => {
    const key = await request('POST', '/api/auth/api-keys', {
      label: 'svc',
      capabilities: ['system/blueprints:read'],
      service: true,
    })
    expect(key.status, key.text).toBe(201)
    const opened = await request('POST', INSTALLS, { source: notes, params: { prefix: fresh() } })
    for (const [method, path, body] of routes(opened.body.data.id)) {
      const reply = await request(method, path, body, key.body.raw)
      if (method === 'GET' && !path.endsWith('/uninstall')) expect(reply.status, `${method} ${path}`).toBe(200)
      else {
        expect(reply.status, `${method} ${path}`).toBe(403)
        expect(reply.body.error).toBe('install_needs_person')
      }
    }
  })

  it('refuses the system principal too: the service, whoever calls it (install_needs_person)', async () => {
    const system = principals.system(server.app.defaultProject.id, 'test')
    const blueprints = server.app.services.blueprints
    const opened = await request('POST', INSTALLS, { source: notes, params: { prefix: fresh() } })
    const calls = [
      () => blueprints.open(system, { source: notes }, true),
      () => blueprints.settle(system, opened.body.data.id, { outcomes: [] }),
      () => blueprints.previewUninstall(system, opened.body.data.id),
      () => blueprints.uninstall(system, opened.body.data.id, {}, true),
    ]
    for (const call of calls) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      )
      expect(isAppError(err) && err.code).toBe('install_needs_person')
    }
  })

  it('installs nothing a person could not make by hand: an editor (no schema create) gets a failed row, no collection', async () => {
    const editor = await createAccount(server, owner.token, { role: 'editor' })
    const prefix = fresh()
    const reply = await request('POST', `${INSTALLS}?apply=true`, { source: notes, params: { prefix } }, editor.token)
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.status).toBe('partial')
    const [collection, seed, view] = reply.body.data.resources as { status: string; error: string }[]
    expect(collection).toMatchObject({ status: 'failed', error: expect.stringMatching(/^forbidden/) })
    // What needs it is not tried.
    expect(seed!.error).toContain('not tried')
    expect(view!.error).toContain('not tried')
    expect((await request('GET', `/api/v1/collections/${prefix}_notes`)).status).toBe(404)

    // Nor removes what they could not remove by hand: the owner's install, uninstalled by the editor.
    const mine = await request('POST', `${INSTALLS}?apply=true`, { source: notes, params: { prefix: fresh() } })
    expect(mine.body.data.status).toBe('complete')
    const ref = mine.body.data.resources[0].resourceRef as string
    const gone = await request('POST', `${INSTALLS}/${mine.body.data.id}/uninstall?apply=true`, {}, editor.token)
    expect(gone.status, gone.text).toBe(200)
    expect(gone.body.data.resources[0]).toMatchObject({
      status: 'detached',
      error: expect.stringMatching(/^forbidden/),
    })
    expect((await request('GET', `/api/v1/collections/${ref}`)).status).toBe(200)
  })

  it("answers 404 for another project's install id on every route", async () => {
    const project = await request('POST', '/api/v1/projects', { name: 'Elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'X-Project-Id': project.body.data.id as string }
    const opened = await request('POST', INSTALLS, { source: notes, params: { prefix: fresh() } }, owner.token, there)
    expect(opened.status, opened.text).toBe(201)
    for (const [method, path, body] of routes(opened.body.data.id).filter(([, p]) => p !== INSTALLS)) {
      const reply = await request(method, path, body)
      expect(reply.status, `${method} ${path}`).toBe(404)
    }
    const mine = await request('GET', INSTALLS)
    expect(mine.body.data.map((i: { id: string }) => i.id)).not.toContain(opened.body.data.id)
  })
})
