import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { brick, documentOf } from '../../src/modules/blueprints/document/test-document.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * Blueprint installs over HTTP (issue 30 item 5, decision 070): the whole life of an app — install
 * (?apply=true) → plan (all NOOP) → edit the document → plan (UPDATE and an orphan) → install again
 * (supersede) → uninstall preview → uninstall — and the ledger's verdicts (DRIFTED, RECREATE, CLAIMED),
 * secrets never stored or answered. SQLite, and PostgreSQL with TEST_DATABASE_URL.
 */

let server: TestServer
let owner: Account
const INSTALLS = '/api/v1/blueprints/installs'
const secret = 'hook-secret-value-8d1f'
let n = 0
/** A fresh namespace per test: tests share one project. */
const fresh = () => `i${Date.now().toString(36).slice(-4)}${n++}`

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

interface AppOptions {
  version?: string
  id?: string
  /** v2: a field more, the view changed, the nav item gone. */
  v2?: boolean
}

const app = (options: AppOptions = {}) =>
  documentOf(
    [
      brick('collection id=tickets', {
        name: '${params.prefix}_tickets',
        accessPreset: 'private',
        fields: [
          { name: 'title', type: 'text', required: true, unique: false, indexed: false },
          { name: 'slug', type: 'text', required: false, unique: false, indexed: true },
          ...(options.v2
            ? [{ name: 'priority', type: 'integer', required: false, unique: false, indexed: false }]
            : []),
        ],
      }),
      brick('access id=tickets-access needs=tickets', {
        collection: '${params.prefix}_tickets',
        accessControl: { preset: 'private', sharing: true },
      }),
      brick('role id=agent', { name: '${params.prefix}-agent', description: 'Answers tickets' }),
      brick('grants id=agent-grants needs=agent,tickets', {
        role: '${params.prefix}-agent',
        grants: [{ resource: 'collections/${params.prefix}_tickets', action: 'read' }],
      }),
      brick('records id=seed needs=tickets', {
        collection: '${params.prefix}_tickets',
        rows: [
          { slug: 'welcome', title: 'Welcome' },
          { slug: 'howto', title: 'How to' },
        ],
      }),
      brick('view id=open needs=tickets', {
        name: 'Open tickets ${params.prefix}',
        collection: '${params.prefix}_tickets',
        shared: true,
        ...(options.v2 ? { layout: 'cards' } : {}),
      }),
      ...(options.v2
        ? []
        : [
            brick('nav id=menu needs=tickets', {
              label: '${params.prefix} tickets',
              target: { kind: 'collection', ref: '${params.prefix}_tickets' },
            }),
          ]),
      brick('webhook id=hook needs=tickets', {
        name: '${params.prefix}_hook',
        collection: '${params.prefix}_tickets',
        events: ['record.create'],
        url: 'https://hooks.example.com/tickets',
        secret: '${secret:hookSecret}',
      }),
    ],
    {
      params: `  - name: prefix\n    type: identifier\n    namespace: true\n  - name: hookSecret\n    type: secret\n`,
      ...(options.version || options.id ? {} : {}),
    },
  )
    .replace('version: 1.0.0', `version: ${options.version ?? '1.0.0'}`)
    .replace('id: help-desk', `id: ${options.id ?? 'help-desk'}`)

const request = (method: string, path: string, body?: unknown, token = owner.token) =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }) })

const install = (prefix: string, options: AppOptions = {}, extra: Record<string, unknown> = {}) =>
  request('POST', `${INSTALLS}?apply=true`, {
    source: app(options),
    params: { prefix },
    consent: ['agent-grants'],
    secrets: { hookSecret: secret },
    ...extra,
  })

const plan = (prefix: string, options: AppOptions = {}) =>
  request('POST', '/api/v1/blueprints/plan', {
    source: app(options),
    params: { prefix },
    secretsProvided: ['hookSecret'],
  })

const verdicts = (reply: { body: { data: { verdicts: { brickId: string; verdict: string }[] } } }) =>
  Object.fromEntries(reply.body.data.verdicts.map((v) => [v.brickId, v.verdict]))

describe('installing a blueprint with ?apply=true', () => {
  it('installs, plans as NOOP, upgrades (UPDATE, an orphan, supersede), previews and uninstalls', async () => {
    const prefix = fresh()
    const first = await install(prefix)
    expect(first.status, first.text).toBe(201)
    expect(first.text).not.toContain(secret)
    const v1 = first.body.data
    expect(v1).toMatchObject({ blueprintId: 'help-desk', version: '1.0.0', status: 'complete', mode: 'server' })
    expect(v1.params).toEqual({ prefix })
    expect(v1.secrets).toEqual(['hookSecret'])
    expect(v1.resources).toHaveLength(8)
    for (const r of v1.resources) {
      expect(r, r.brickId).toMatchObject({ status: 'settled', verdict: 'CREATE', error: null })
      expect(r.contentHash).toMatch(/^[0-9a-f]{64}$/)
      expect(r.resourceRef).toEqual(expect.any(String))
    }
    // What a user sees: the collection, its seed rows, the role with its grants, the webhook holding a secret.
    const records = await request('GET', `/api/v1/collections/${prefix}_tickets/records`)
    expect(records.body.data.map((r: { slug: string }) => r.slug).sort()).toEqual(['howto', 'welcome'])
    const hooks = await request('GET', '/api/v1/webhooks')
    const hook = hooks.body.data.find((h: { name: string }) => h.name === `${prefix}_hook`)
    expect(hook).toMatchObject({ hasSecret: true })
    const got = await request('GET', `${INSTALLS}/${v1.id}`)
    expect(got.status).toBe(200)
    expect(got.text).not.toContain(secret)
    expect(got.body.data).toEqual(v1)

    // The ledger answers for everything it installed: all NOOP, compared against this install.
    const same = await plan(prefix)
    expect(same.status, same.text).toBe(200)
    expect(same.body.data.baseline).toEqual({ installId: v1.id, version: '1.0.0', docHash: v1.docHash })
    expect(Object.values(verdicts(same))).toEqual(Array(8).fill('NOOP'))
    expect(same.body.data.actions).toEqual([])
    expect(same.body.data.orphans).toEqual([])

    // The document changes: a field more and a view changed are UPDATEs, the nav item gone is an orphan.
    const upgrade = await plan(prefix, { v2: true, version: '1.1.0' })
    expect(upgrade.body.data).toMatchObject({ ok: true, installable: true })
    expect(verdicts(upgrade)).toMatchObject({ tickets: 'UPDATE', open: 'UPDATE', seed: 'NOOP', hook: 'NOOP' })
    const tickets = upgrade.body.data.verdicts.find((v: { brickId: string }) => v.brickId === 'tickets')
    expect(tickets).toMatchObject({ autoApply: true, requiresConsent: false })
    expect(tickets.changedPaths).toEqual(['fields'])
    const menu = v1.resources.find((r: { brickId: string }) => r.brickId === 'menu')
    expect(upgrade.body.data.orphans).toEqual([{ brickId: 'menu', kind: 'nav', resourceRef: menu.resourceRef }])

    const second = await install(prefix, { v2: true, version: '1.1.0' })
    expect(second.status, second.text).toBe(201)
    const v2 = second.body.data
    expect(v2).toMatchObject({ status: 'complete', supersedes: v1.id, version: '1.1.0' })
    expect(v2.resources.find((r: { brickId: string }) => r.brickId === 'tickets')).toMatchObject({
      verdict: 'UPDATE',
      status: 'settled',
    })
    const fields = await request('GET', `/api/v1/collections/${prefix}_tickets`)
    expect(fields.body.data.fields.map((f: { name: string }) => f.name)).toContain('priority')
    const superseded = await request('GET', `${INSTALLS}/${v1.id}`)
    expect(superseded.body.data).toMatchObject({ status: 'superseded', supersededBy: v2.id })
    const listed = await request('GET', `${INSTALLS}?blueprint=help-desk`)
    expect(listed.body.data.map((i: { id: string }) => i.id).slice(0, 2)).toEqual([v2.id, v1.id])
    // An older document than the installed one is a warning.
    const older = await plan(prefix, { version: '0.9.0' })
    expect(older.body.data.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'plan.version_downgrade', severity: 'warning' }),
    )

    // Uninstall: the superseded run is not the one to uninstall; the preview lists the orphan and the rest.
    expect((await request('GET', `${INSTALLS}/${v1.id}/uninstall`)).status).toBe(409)
    const preview = await request('GET', `${INSTALLS}/${v2.id}/uninstall`)
    expect(preview.status, preview.text).toBe(200)
    const listedIds = preview.body.data.resources.map((r: { brickId: string }) => r.brickId)
    expect(listedIds[0]).toBe('menu')
    expect(listedIds.at(-1)).toBe('tickets')
    expect(preview.body.data.resources.every((r: { present: boolean }) => r.present)).toBe(true)
    expect(preview.body.data.actions).toContainEqual(
      expect.objectContaining({ method: 'DELETE', path: `/api/v1/collections/${prefix}_tickets` }),
    )
    expect((await request('GET', `/api/v1/collections/${prefix}_tickets`)).status).toBe(200)

    const removed = await request('POST', `${INSTALLS}/${v2.id}/uninstall?apply=true`, {})
    expect(removed.status, removed.text).toBe(200)
    expect(removed.body.data.status).toBe('uninstalled')
    expect(removed.body.data.resources.every((r: { status: string }) => r.status === 'rolled_back')).toBe(true)
    expect((await request('GET', `/api/v1/collections/${prefix}_tickets`)).status).toBe(404)
    const roles = await request('GET', '/api/v1/roles')
    expect(roles.body.data.map((r: { name: string }) => r.name)).not.toContain(`${prefix}-agent`)
    const nav = await request('GET', '/api/v1/navigation')
    expect(JSON.stringify(nav.body.data)).not.toContain(`${prefix} tickets`)
    // Nothing is held any more: a plan starts over.
    const after = await plan(prefix)
    expect(after.body.data.baseline).toBeNull()
    expect(Object.values(verdicts(after))).toEqual(Array(8).fill('CREATE'))
    // And installs again, the ledger taking up the rows the uninstall let go.
    const reinstalled = await install(prefix)
    expect(reinstalled.status, reinstalled.text).toBe(201)
    expect(reinstalled.body.data.status).toBe('complete')
    expect(Object.values(verdicts(await plan(prefix)))).toEqual(Array(8).fill('NOOP'))
  })

  it('DRIFTED for a change by hand (consent), RECREATE for a resource gone, CLAIMED by another blueprint', async () => {
    const prefix = fresh()
    const first = await install(prefix)
    expect(first.status, first.text).toBe(201)
    const ref = (brickId: string) =>
      first.body.data.resources.find((r: { brickId: string }) => r.brickId === brickId).resourceRef as string
    await request('PATCH', `/api/v1/views/${ref('open')}`, { layout: 'cards' })
    expect((await request('DELETE', `/api/v1/navigation/${ref('menu')}`)).status).toBeLessThan(300)
    const planned = await plan(prefix)
    const byId = Object.fromEntries(
      planned.body.data.verdicts.map((v: { brickId: string }) => [v.brickId, v] as const),
    ) as Record<string, { verdict: string; requiresConsent: boolean; changedPaths: string[] }>
    expect(byId.open).toMatchObject({ verdict: 'DRIFTED', requiresConsent: true, changedPaths: ['layout'] })
    expect(byId.menu).toMatchObject({ verdict: 'RECREATE', requiresConsent: false })

    // Without consent the drift is left as it is (skipped); the nav item is made again.
    const again = await install(prefix, {}, { consent: [] })
    expect(again.status, again.text).toBe(201)
    const rows = Object.fromEntries(
      again.body.data.resources.map((r: { brickId: string }) => [r.brickId, r] as const),
    ) as Record<string, { status: string; verdict: string; resourceRef: string }>
    expect(rows.open).toMatchObject({ verdict: 'DRIFTED', status: 'skipped' })
    expect(rows.menu).toMatchObject({ verdict: 'RECREATE', status: 'settled' })
    expect(rows.menu?.resourceRef).not.toBe(ref('menu'))
    expect(again.body.data.status).toBe('complete')
    const view = await request('GET', `/api/v1/views/${ref('open')}`)
    expect(view.body.data.layout).toBe('cards')

    // The same blueprint in another namespace is another install: CREATE.
    const twin = await plan(fresh())
    expect(Object.values(verdicts(twin))).toEqual(Array(8).fill('CREATE'))
    // Another blueprint naming the same collection: CLAIMED, never applied.
    const other = await request('POST', '/api/v1/blueprints/plan', {
      source: app({ id: 'other-desk' }),
      params: { prefix },
      secretsProvided: ['hookSecret'],
    })
    expect(verdicts(other).tickets).toBe('CLAIMED')
    const claimed = other.body.data.verdicts.find((v: { brickId: string }) => v.brickId === 'tickets')
    expect(claimed.warnings[0].message).toContain('help-desk')
    expect(other.body.data.actions.filter((a: { brickId: string }) => a.brickId === 'tickets')).toEqual([])

    // The collection dropped by hand: it and its seed rows are to be made again (not an error).
    expect((await request('DELETE', `/api/v1/collections/${prefix}_tickets`)).status).toBeLessThan(300)
    const gone = await plan(prefix)
    expect(gone.status, gone.text).toBe(200)
    expect(verdicts(gone)).toMatchObject({ tickets: 'RECREATE', seed: 'RECREATE' })
  })

  it('refuses what cannot be installed: a failing document (400), a BLOCKED brick (409), a missing secret (400)', async () => {
    const prefix = fresh()
    const broken = await request('POST', INSTALLS, { source: '---\nformat: nope\n---\n', params: { prefix } })
    expect(broken.status).toBe(400)
    expect(broken.body.details.diagnostics[0].code).toBe('envelope.unsupported_format')
    const escalating = documentOf([
      brick('role id=r', { name: '${params.prefix}-r' }),
      brick('grants id=g needs=r', {
        role: '${params.prefix}-r',
        grants: [{ resource: 'system/users', action: 'update' }],
      }),
    ])
    const blocked = await request('POST', INSTALLS, { source: escalating, params: { prefix } })
    expect(blocked.status, blocked.text).toBe(409)
    expect(blocked.body.details.verdicts[0]).toMatchObject({ brickId: 'g', reason: 'grant.escalates_installer' })
    const noSecret = await request('POST', `${INSTALLS}?apply=true`, { source: app(), params: { prefix } })
    expect(noSecret.status, noSecret.text).toBe(400)
    expect(noSecret.body.details.missingSecrets).toEqual(['hookSecret'])
    const secretInParams = await request('POST', INSTALLS, { source: app(), params: { prefix, hookSecret: 'x' } })
    expect(secretInParams.status).toBe(400)
    expect(secretInParams.body.details.param).toBe('hookSecret')
    // Nothing was written by any of them.
    expect((await request('GET', `/api/v1/collections/${prefix}_tickets`)).status).toBe(404)
    const runs = await request('GET', `${INSTALLS}`)
    expect(JSON.stringify(runs.body.data)).not.toContain(prefix)
  })
})
