import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock, type ManualClock } from '../../src/lib/clock-manual.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'

/**
 * Nobody runs a flow with rights they do not hold (issue 25 finding 1 and the unconfirmed findings; decision
 * 045), attacked as the adversarial review did, on a manual clock so schedules tick when the test says. Each
 * test failed on the code before: runs acted as the flow's creator whoever changed or published it, publish
 * and activation were unchecked, a delegation outlived its delegator's demotion, and a key's run dropped the
 * key's capabilities under role:<id>.
 */
const BASE = '/api/v1/automate'
const SECRET = 'top-secret-value'
let server: TestServer
let clock: ManualClock
let owner: Account
let admin: Account
/** Holds only system/automate read, create, update and execute: no manage, no collection rights. */
let mallory: Account
let secretId: string
let reader: string

const call = (method: string, path: string, token: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }) })

async function ok(reply: Promise<Reply>, status = 200): Promise<any> {
  const done = await reply
  expect(done.status, done.text).toBe(status)
  return done.body
}

async function finished(runId: string): Promise<any> {
  const deadline = Date.now() + 30_000
  for (;;) {
    await clock.advance(0)
    const reply = await call('GET', `${BASE}/runs/${runId}`, owner.token)
    if (reply.body.data && !['pending', 'running'].includes(reply.body.data.status)) return reply.body.data
    if (Date.now() > deadline) throw new Error(`run did not end: ${reply.text}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The runs of a flow, oldest first, each to its end (as the owner reads them: everything shown). */
async function runsOf(flowId: string, atLeast: number): Promise<any[]> {
  const deadline = Date.now() + 30_000
  for (;;) {
    await clock.advance(0)
    const list = await ok(call('GET', `${BASE}/flows/${flowId}/runs?limit=100`, owner.token))
    if (list.data.length >= atLeast) return Promise.all((list.data as any[]).reverse().map((r) => finished(r.runId)))
    if (Date.now() > deadline) throw new Error(`${list.data.length} runs, not ${atLeast}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function secretValue(): Promise<string> {
  return (await ok(call('GET', `/api/v1/collections/secrets/records/${secretId}`, owner.token))).data.value
}

/** A harmless manual flow the owner (super_admin) made and published. */
async function ownersFlow(name: string): Promise<string> {
  const created = await ok(
    call('POST', `${BASE}/flows`, owner.token, {
      name,
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'hello', type: 'log', config: { message: 'hi' } }],
    }),
    201,
  )
  await ok(call('POST', `${BASE}/flows/${created.data.id}/publish`, owner.token, { changeSummary: 'harmless' }))
  return created.data.id
}

const readSecrets = { key: 'steal', type: 'crud_read', config: { collection: 'secrets', limit: 10 } }

beforeAll(async () => {
  clock = createManualClock(Date.UTC(2026, 5, 1, 12))
  server = await startServer({ REDIS_URL: '', SESSION_TTL_SECONDS: String(60 * 24 * 3600) }, { clock })
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  await ok(call('POST', '/api/v1/roles', owner.token, { name: 'automator' }), 201)
  await setGrants(
    server,
    owner.token,
    'automator',
    ['read', 'create', 'update', 'execute'].map((action) => ({ resource: 'system/automate', action })),
  )
  mallory = await createAccount(server, owner.token, { role: 'automator' })
  // A role that may read the secrets: what delegations below hand out.
  await ok(call('POST', '/api/v1/roles', owner.token, { name: 'reader' }), 201)
  await setGrants(server, owner.token, 'reader', [{ resource: 'collections/secrets', action: 'read' }])
  reader = (await ok(call('GET', '/api/v1/roles', owner.token))).data.find((r: any) => r.name === 'reader').id
  await ok(
    call('POST', '/api/v1/collections', owner.token, {
      name: 'secrets',
      fields: [{ name: 'value', type: 'text', required: true }],
    }),
    201,
  )
  secretId = (await ok(call('POST', '/api/v1/collections/secrets/records', owner.token, { value: SECRET }), 201)).id
})
afterAll(async () => {
  await server?.stop()
})

describe('finding 1: a flow editor borrows the owner’s rights through a schedule', () => {
  it('the automator cannot read the secrets itself', async () => {
    expect((await call('GET', '/api/v1/collections/secrets/records', mallory.token)).status).toBe(403)
  })

  it('a schedule the automator published acts as the automator: the secrets are neither read nor written', async () => {
    const id = await ownersFlow('Harmless')
    const schedule = { triggerType: 'schedule', triggerConfig: { cron: '*/2 * * * * *', timezone: 'UTC' } }
    await ok(call('PATCH', `${BASE}/flows/${id}`, mallory.token, { ...schedule, operations: [readSecrets] }))
    // Publishing and activating it are allowed: the automator takes responsibility, and the runs act within its rights.
    await ok(call('POST', `${BASE}/flows/${id}/publish`, mallory.token, { changeSummary: 'mine now' }))
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, mallory.token, { status: 'active' }))
    await clock.advance(2000)
    const [run] = await runsOf(id, 1)
    expect(run.actingAs).toMatchObject({ kind: 'user', userId: mallory.id })
    expect(run.status).toBe('failed')
    expect(run.stepLogs[0]).toMatchObject({ key: 'steal', status: 'failed', output: null })
    expect(JSON.stringify(run)).not.toContain(SECRET)
    // What the automator sees of its own run holds no secret either.
    expect((await call('GET', `${BASE}/runs/${run.runId}`, mallory.token)).text).not.toContain(SECRET)

    // The second try: an update of the secret.
    await ok(
      call('PATCH', `${BASE}/flows/${id}`, mallory.token, {
        operations: [
          {
            key: 'overwrite',
            type: 'crud_update',
            config: { collection: 'secrets', id: secretId, data: { value: 'pwned' } },
          },
        ],
      }),
    )
    await ok(call('POST', `${BASE}/flows/${id}/publish`, mallory.token, { changeSummary: 'write' }))
    await clock.advance(2000)
    const runs = await runsOf(id, 2)
    expect(runs.at(-1)).toMatchObject({ status: 'failed', actingAs: { userId: mallory.id } })
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, mallory.token, { status: 'inactive' }))
    expect(await secretValue()).toBe(SECRET)
  })

  it('a system-started event run acts as the publisher, not as the flow’s creator', async () => {
    await ok(
      call('POST', '/api/v1/collections', owner.token, {
        name: 'notes',
        fields: [{ name: 'title', type: 'text', required: true }],
      }),
      201,
    )
    const id = await ownersFlow('Harmless on notes')
    await ok(
      call('PATCH', `${BASE}/flows/${id}`, mallory.token, {
        triggerType: 'event_action',
        triggerConfig: { events: ['record.delete'] },
        collections: ['notes'],
        operations: [readSecrets],
      }),
    )
    await ok(call('POST', `${BASE}/flows/${id}/publish`, mallory.token, { changeSummary: 'on delete' }))
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, mallory.token, { status: 'active' }))
    const note = await ok(call('POST', '/api/v1/collections/notes/records', owner.token, { title: 'old' }), 201)
    await ok(call('PATCH', '/api/v1/settings', owner.token, { 'automate.archival_days': 1 }))
    await ok(call('DELETE', `/api/v1/collections/notes/records/${note.id}`, owner.token))
    // Two days on, system_archival's schedule (acting as the system) purges the note: record.delete set off by Plinth itself.
    const archival = (await ok(call('GET', `${BASE}/flows`, owner.token))).data.find(
      (f: any) => f.system && f.operations[0].type === 'system_archival',
    )
    // Each night as a suspended machine wakes (jump: what fell due fires once) to just before 03:00, then tick
    // by tick through it, each run awaited before the clock moves on: advancing through the whole day would fire
    // every minute's tick of the day. 03:00 on the 2nd is too early for a note deleted on the 1st at noon.
    const minutes = 60_000
    await clock.jump(15 * 3_600_000 - 2 * minutes)
    await clock.advance(2 * minutes + 1)
    await runsOf(archival.id, 1)
    await clock.jump(86_400_000 - 2 * minutes)
    await clock.advance(2 * minutes)
    const purges = await runsOf(archival.id, 2)
    expect(
      purges.map((r) => r.stepLogs[0]?.output?.purged),
      JSON.stringify(purges),
    ).toContain(1)
    const runs = await runsOf(id, 2)
    const bySystem = runs.find((r) => r.depth === 1)
    expect(bySystem, JSON.stringify(runs.map((r) => r.actingAs))).toBeDefined()
    expect(bySystem.actingAs).toMatchObject({ kind: 'user', userId: mallory.id })
    for (const run of runs) expect(run.status).toBe('failed')
    expect(JSON.stringify(runs)).not.toContain(SECRET)
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'inactive' }))
  })
})

describe('publishing and activating take responsibility', () => {
  it('a lesser role may not set running a flow published by someone above it', async () => {
    const id = await ownersFlow('Owner published')
    const refused = await call('PATCH', `${BASE}/flows/${id}/status`, mallory.token, { status: 'active' })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.details).toMatchObject({ field: 'status' })
    const asAdmin = await call('PATCH', `${BASE}/flows/${id}/status`, admin.token, { status: 'active' })
    expect(asAdmin.status, asAdmin.text).toBe(403)
    // The owner may; and once the automator publishes it, the flow is the automator's to set running.
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'active' }))
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, mallory.token, { status: 'inactive' }))
    await ok(call('POST', `${BASE}/flows/${id}/publish`, mallory.token, { changeSummary: 'mine' }))
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, mallory.token, { status: 'active' }))
    expect((await ok(call('GET', `${BASE}/flows/${id}`, owner.token))).data.publishedBy).toBe(mallory.id)
  })

  it('an admin editing a super_admin’s schedule runs it as the admin from the publish on', async () => {
    const id = await ownersFlow('Nightly')
    await ok(
      call('PATCH', `${BASE}/flows/${id}`, owner.token, {
        triggerType: 'schedule',
        triggerConfig: { cron: '0 * * * * *', timezone: 'UTC' },
      }),
    )
    await ok(call('POST', `${BASE}/flows/${id}/publish`, owner.token, { changeSummary: 'every minute' }))
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'active' }))
    await clock.advance(60_000)
    expect((await runsOf(id, 1))[0].actingAs).toMatchObject({ userId: owner.id })
    await ok(
      call('PATCH', `${BASE}/flows/${id}`, admin.token, {
        operations: [{ key: 'hello', type: 'log', config: { message: 'admin was here' } }],
      }),
    )
    await ok(call('POST', `${BASE}/flows/${id}/publish`, admin.token, { changeSummary: 'mine' }))
    await clock.advance(60_000)
    const runs = await runsOf(id, 2)
    expect(runs[1].actingAs).toMatchObject({ kind: 'user', userId: admin.id })
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, admin.token, { status: 'inactive' }))
    // Rolling back to the owner's version makes the admin its publisher too: it never runs as the owner again.
    await ok(call('POST', `${BASE}/flows/${id}/rollback/1`, admin.token))
    expect((await ok(call('GET', `${BASE}/flows/${id}`, owner.token))).data).toMatchObject({
      publishedVersion: 1,
      publishedBy: admin.id,
    })
  })

  it('a delegated draft is published only by one who could set the delegation', async () => {
    const id = await ownersFlow('Delegated')
    await ok(call('PATCH', `${BASE}/flows/${id}`, owner.token, { runAs: `role:${reader}` }))
    // Changing or publishing it wields the delegation: the automator (no manage) may do neither.
    expect((await call('PATCH', `${BASE}/flows/${id}`, mallory.token, { operations: [readSecrets] })).status).toBe(403)
    expect((await call('POST', `${BASE}/flows/${id}/publish`, mallory.token, { changeSummary: 'x' })).status).toBe(403)
    await ok(call('POST', `${BASE}/flows/${id}/publish`, owner.token, { changeSummary: 'delegated' }))
    expect((await call('PATCH', `${BASE}/flows/${id}/status`, mallory.token, { status: 'active' })).status).toBe(403)
  })
})

describe('delegations are re-checked when a run starts', () => {
  it('a flow delegated by an admin who is then demoted fails delegation_revoked, and reads nothing', async () => {
    const delegator = await createAccount(server, owner.token, { role: 'admin' })
    const created = await ok(
      call('POST', `${BASE}/flows`, delegator.token, {
        name: 'Reads for everyone',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [readSecrets],
      }),
      201,
    )
    const id = created.data.id
    await ok(call('PATCH', `${BASE}/flows/${id}`, delegator.token, { runAs: `role:${reader}` }))
    await ok(call('POST', `${BASE}/flows/${id}/publish`, delegator.token, { changeSummary: 'v1' }))
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, delegator.token, { status: 'active' }))
    const before = await finished(
      (await ok(call('POST', `${BASE}/flows/${id}/execute`, mallory.token, {}), 202)).data.runId,
    )
    expect(before).toMatchObject({ status: 'completed', actingAs: { userId: mallory.id, roleId: reader } })
    expect(before.stepLogs[0].output.records[0].value).toBe(SECRET)

    await ok(call('PATCH', `/api/v1/users/${delegator.id}`, owner.token, { role: 'editor' }))
    const after = await finished(
      (await ok(call('POST', `${BASE}/flows/${id}/execute`, mallory.token, {}), 202)).data.runId,
    )
    expect(after).toMatchObject({ status: 'failed', error: { code: 'delegation_revoked' }, stepLogs: [] })
    expect(JSON.stringify(after)).not.toContain(SECRET)
  })

  it('a run set off by an API key under role:<id> stays within the key’s capabilities', async () => {
    const created = await ok(
      call('POST', `${BASE}/flows`, owner.token, {
        name: 'Key run',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [readSecrets],
      }),
      201,
    )
    const id = created.data.id
    await ok(call('PATCH', `${BASE}/flows/${id}`, owner.token, { runAs: `role:${reader}` }))
    await ok(call('POST', `${BASE}/flows/${id}/publish`, owner.token, { changeSummary: 'v1' }))
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'active' }))
    const key = await ok(
      call('POST', '/api/auth/api-keys', mallory.token, {
        label: 'executor',
        capabilities: ['system/automate:execute'],
      }),
      201,
    )
    const run = await finished(
      (await ok(server.request('POST', `${BASE}/flows/${id}/execute`, { token: key.raw, body: {} }), 202)).data.runId,
    )
    expect(run.actingAs).toMatchObject({ kind: 'api_key', userId: mallory.id, roleId: reader })
    expect(run).toMatchObject({ status: 'failed' })
    expect(run.stepLogs[0]).toMatchObject({ status: 'failed', error: { code: 'forbidden' } })
    expect(JSON.stringify(run)).not.toContain(SECRET)
  })
})
