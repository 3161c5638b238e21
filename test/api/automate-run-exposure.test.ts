import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'

/**
 * What a run may reach and show (issue 25 findings 4, 5 and 7; decision 045), attacked as the review did.
 * Each test failed on the code before: event runs acted with the full rights of whoever fired them, run
 * detail showed every step's data to anyone with system/automate:read, dry runs were free, and a flow writing
 * its own collection re-triggered itself until the project's runs per hour were gone.
 */
const BASE = '/api/v1/automate'
const SECRET = 'top-secret-value'
let server: TestServer
let owner: Account
let admin: Account
/** system/automate read, create, update and execute, plus notes read and create. */
let notetaker: Account

const call = (method: string, path: string, token: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }) })

async function ok(reply: Promise<Reply>, status = 200): Promise<any> {
  const done = await reply
  expect(done.status, done.text).toBe(status)
  return done.body
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The flow's ended runs, oldest first, as the owner sees them, once there are `count`. */
async function endedRuns(flowId: string, count: number): Promise<any[]> {
  const list = await until(
    () => ok(call('GET', `${BASE}/flows/${flowId}/runs?limit=100`, owner.token)),
    (l) => l.data.length >= count && l.data.every((r: any) => !['pending', 'running'].includes(r.status)),
    `${count} runs of ${flowId}`,
  )
  return Promise.all(
    (list.data as any[])
      .reverse()
      .map(async (r) => (await ok(call('GET', `${BASE}/runs/${r.runId}`, owner.token))).data),
  )
}

/** Creates, publishes and activates a flow as `account`; answers its id. */
async function activeFlow(account: Account, flow: Record<string, unknown>): Promise<string> {
  const created = await ok(call('POST', `${BASE}/flows`, account.token, flow), 201)
  await ok(call('POST', `${BASE}/flows/${created.data.id}/publish`, account.token, { changeSummary: 'v1' }))
  await ok(call('PATCH', `${BASE}/flows/${created.data.id}/status`, account.token, { status: 'active' }))
  return created.data.id
}

const steal = [
  { key: 'steal', type: 'crud_read', config: { collection: 'secrets', limit: 10 } },
  { key: 'leak', type: 'crud_create', config: { collection: 'notes', data: { title: 'loot {{$steps.steal}}' } } },
]

async function notesText(): Promise<string> {
  return (await call('GET', '/api/v1/collections/notes/records?limit=100', notetaker.token)).text
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  await ok(call('POST', '/api/v1/roles', owner.token, { name: 'notetaker' }), 201)
  await setGrants(server, owner.token, 'notetaker', [
    ...['read', 'create', 'update', 'execute'].map((action) => ({ resource: 'system/automate', action })),
    { resource: 'collections/notes', action: 'read' },
    { resource: 'collections/notes', action: 'create' },
  ])
  notetaker = await createAccount(server, owner.token, { role: 'notetaker' })
  for (const name of ['secrets', 'notes']) {
    await ok(
      call('POST', '/api/v1/collections', owner.token, {
        name,
        fields: [{ name: name === 'secrets' ? 'value' : 'title', type: 'text', required: true }],
      }),
      201,
    )
  }
  await ok(call('POST', '/api/v1/collections/secrets/records', owner.token, { value: SECRET }), 201)
})
afterAll(async () => {
  await server?.stop()
})

describe('finding 4: event flows never exceed the rights of their publisher', () => {
  it('a user.login flow published by the notetaker acts as the super_admin who signs in, capped by the notetaker', async () => {
    const id = await activeFlow(notetaker, {
      name: 'On login',
      triggerType: 'app_event',
      triggerConfig: { events: ['user.login'] },
      operations: steal,
    })
    await ok(
      server.request('POST', '/api/auth/sign-in/email', { body: { email: owner.email, password: owner.password } }),
    )
    const [run] = await endedRuns(id, 1)
    expect(await notesText()).not.toContain(SECRET)
    expect(run).toMatchObject({
      status: 'failed',
      stepLogs: [{ key: 'steal', status: 'failed', error: { code: 'forbidden' } }],
    })
    expect(run.actingAs).toMatchObject({
      kind: 'user',
      userId: owner.id,
      cappedBy: { kind: 'user', userId: notetaker.id },
    })
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, notetaker.token, { status: 'inactive' }))
  })

  it('an event_action flow fired by an administrator’s write reads nothing the notetaker could not', async () => {
    const id = await activeFlow(notetaker, {
      name: 'On note',
      triggerType: 'event_action',
      triggerConfig: { events: ['record.create'] },
      collections: ['notes'],
      operations: steal.slice(0, 1),
    })
    await ok(call('POST', '/api/v1/collections/notes/records', admin.token, { title: 'hello' }), 201)
    const [run] = await endedRuns(id, 1)
    expect(JSON.stringify(run)).not.toContain(SECRET)
    expect(run).toMatchObject({ status: 'failed', stepLogs: [{ status: 'failed', error: { code: 'forbidden' } }] })
    expect(run.actingAs).toMatchObject({ userId: admin.id, cappedBy: { userId: notetaker.id } })
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, notetaker.token, { status: 'inactive' }))
  })
})

describe('finding 5: step data only for those who could read it', () => {
  it('an administrator’s run reading the secrets shows its steps’ data to the administrator, not to a reader of runs', async () => {
    const id = await activeFlow(admin, {
      name: 'Admin reads',
      triggerType: 'manual',
      triggerConfig: {},
      operations: steal.slice(0, 1),
    })
    const started = await ok(call('POST', `${BASE}/flows/${id}/execute`, admin.token, { note: SECRET }), 202)
    const [run] = await endedRuns(id, 1)
    expect(run.stepLogs[0].output.records[0].value).toBe(SECRET)
    expect((await call('GET', '/api/v1/collections/secrets/records', notetaker.token)).status).toBe(403)
    const seen = await ok(call('GET', `${BASE}/runs/${started.data.runId}`, notetaker.token))
    expect(seen.data).toMatchObject({
      status: 'completed',
      redacted: true,
      trigger: { body: null },
      stepLogs: [{ key: 'steal', status: 'completed', input: null, output: null }],
    })
    expect(JSON.stringify(seen)).not.toContain(SECRET)
    expect((await ok(call('GET', `${BASE}/runs/${started.data.runId}`, admin.token))).data.redacted).toBe(false)
  })

  it('a colleague in the same role sees a run that acted as a holder of that role', async () => {
    await ok(call('POST', '/api/v1/roles', owner.token, { name: 'auditor' }), 201)
    await setGrants(server, owner.token, 'auditor', [
      { resource: 'collections/secrets', action: 'read' },
      { resource: 'system/automate', action: 'read' },
      { resource: 'system/automate', action: 'execute' },
    ])
    const [first, second] = [
      await createAccount(server, owner.token, { role: 'auditor' }),
      await createAccount(server, owner.token, { role: 'auditor' }),
    ]
    const id = await activeFlow(admin, {
      name: 'Audit',
      triggerType: 'manual',
      triggerConfig: {},
      operations: steal.slice(0, 1),
    })
    const started = await ok(call('POST', `${BASE}/flows/${id}/execute`, first!.token, {}), 202)
    await endedRuns(id, 1)
    const seen = await ok(call('GET', `${BASE}/runs/${started.data.runId}`, second!.token))
    expect(seen.data.redacted).toBe(false)
    expect(seen.data.stepLogs[0].output.records[0].value).toBe(SECRET)
  })
})

describe('finding 7: runs that cost nothing and chains that never end', () => {
  it('a flow writing the collection that triggers it stops after a chain of 8, and the project keeps running flows', async () => {
    await ok(
      call('POST', '/api/v1/collections', owner.token, {
        name: 'echoes',
        fields: [{ name: 'title', type: 'text', required: true }],
      }),
      201,
    )
    const id = await activeFlow(admin, {
      name: 'Echo',
      triggerType: 'event_action',
      triggerConfig: { events: ['record.create'] },
      collections: ['echoes'],
      operations: [{ key: 'again', type: 'crud_create', config: { collection: 'echoes', data: { title: 'echo' } } }],
    })
    await ok(call('POST', '/api/v1/collections/echoes/records', admin.token, { title: 'first' }), 201)
    // Depth 0 (set off by the admin) through depth 8: nine runs, ten records.
    // Sorted: runs created within the same millisecond list in no particular order.
    const runs = await endedRuns(id, 9)
    expect(runs.map((r) => r.depth).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    const count = async () =>
      (await ok(call('GET', '/api/v1/collections/echoes/records?limit=1', owner.token))).total as number
    await until(count, (n) => n === 10, 'ten echoes')
    await ok(call('PATCH', `${BASE}/flows/${id}/status`, admin.token, { status: 'inactive' }))
    expect((await ok(call('GET', `${BASE}/flows/${id}/runs?limit=100`, owner.token))).data).toHaveLength(9)
    expect(await count()).toBe(10)
    const quotas = await ok(call('GET', `${BASE}/quotas`, owner.token))
    expect(quotas.data.usage.runsThisHour).toBeLessThan(20)
  })
})

describe('finding 7: dry runs count against runs per hour', () => {
  let quota: TestServer
  afterAll(async () => {
    await quota?.stop()
  })

  it('once the hour’s runs are spent, a dry run and a script test are refused like an execution', async () => {
    quota = await startServer()
    const boss = await signUpOwner(quota)
    const req = (method: string, path: string, body?: unknown) =>
      quota.request(method, path, { token: boss.token, ...(body === undefined ? {} : { body }) })
    expect((await req('PATCH', `${BASE}/quotas`, { maxRunsPerHour: 3 })).status).toBe(200)
    const flow = await req('POST', `${BASE}/flows`, {
      name: 'Dry',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'hi', type: 'log', config: { message: 'hi' } }],
    })
    const script = await req('POST', `${BASE}/scripts`, { name: 'Spin', code: 'return 1' })
    expect(script.status, script.text).toBe(201)
    for (let i = 0; i < 2; i++)
      expect((await req('POST', `${BASE}/flows/${flow.body.data.id}/test`, {})).status).toBe(200)
    // A script's test evaluates as much as a run does: it counts too.
    expect((await req('POST', `${BASE}/scripts/${script.body.data.id}/test`, {})).status).toBe(200)
    for (const path of [`${BASE}/flows/${flow.body.data.id}/test`, `${BASE}/scripts/${script.body.data.id}/test`]) {
      const refused = await req('POST', path, {})
      expect(refused.status, refused.text).toBe(403)
      expect(refused.body).toMatchObject({ error: 'quota_exceeded', details: { quota: 'maxRunsPerHour' } })
    }
  })
})
