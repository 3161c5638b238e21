import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock, type ManualClock } from '../../src/lib/clock-manual.js'
import type { RecordEvent } from '../../src/modules/records/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { startSibling } from '../support/sibling.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll, recordsPath } from './records-fixtures.js'

/**
 * Triggers (automation spec "Trigger types", "Webhook (public) trigger endpoint"; docs/automation-triggers.md)
 * over real HTTP: each trigger type starts runs of active published flows with the `$trigger` documented,
 * and refuses what its config refuses without starting a run. Schedules across a daylight-saving change and
 * two instances are in src/modules/automate/triggers/schedule*.test.ts and automate-triggers-scale-out.test.ts.
 */

const BASE = '/api/v1/automate'
let server: TestServer
let owner: Account
let editor: Account
let viewer: Account
let tasks: string

const call = (
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Reply> => server.request(method, path, options)

/** A step that records `$trigger` in its output, so a run's detail shows what started it. */
const echo = { key: 'seen', type: 'set_variable', config: { key: 'seen', value: '{{= $trigger }}' } }

/** Creates, publishes and activates a flow; returns its detail. */
async function activeFlow(
  triggerType: string,
  triggerConfig: Record<string, unknown>,
  operations: unknown[] = [echo],
  extra: Record<string, unknown> = {},
) {
  const created = await call('POST', `${BASE}/flows`, {
    token: owner.token,
    body: { name: `${triggerType} flow`, triggerType, triggerConfig, operations, ...extra },
  })
  expect(created.status, created.text).toBe(201)
  const id = created.body.data.id as string
  const published = await call('POST', `${BASE}/flows/${id}/publish`, {
    token: owner.token,
    body: { changeSummary: 'first' },
  })
  expect(published.status, published.text).toBe(200)
  const activated = await call('PATCH', `${BASE}/flows/${id}/status`, {
    token: owner.token,
    body: { status: 'active' },
  })
  expect(activated.status, activated.text).toBe(200)
  const detail = await call('GET', `${BASE}/flows/${id}`, { token: owner.token })
  expect(detail.status, detail.text).toBe(200)
  return detail.body.data as { id: string; webhookEndpoint: { token: string; url: string } | null }
}

async function setStatus(flowId: string, status: string): Promise<void> {
  const reply = await call('PATCH', `${BASE}/flows/${flowId}/status`, { token: owner.token, body: { status } })
  expect(reply.status, reply.text).toBe(200)
}

/** The runs of a flow, newest first. */
async function runsOf(flowId: string): Promise<{ runId: string; status: string; triggerType: string }[]> {
  const reply = await call('GET', `${BASE}/runs?flow_id=${flowId}&limit=100`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** Waits (up to 10 s) until the flow has `count` runs, all finished, and returns their details, oldest first. */
async function finishedRuns(flowId: string, count: number): Promise<any[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const runs = await runsOf(flowId)
    const done = runs.filter((r) => !['pending', 'running'].includes(r.status))
    if (runs.length >= count && done.length === runs.length) {
      const details = await Promise.all(
        runs.map(async (r) => (await call('GET', `${BASE}/runs/${r.runId}`, { token: owner.token })).body.data),
      )
      return details.reverse()
    }
    if (Date.now() > deadline)
      throw new Error(`flow ${flowId}: ${runs.length} runs (${done.length} finished), expected ${count}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** What the echo step saw as `$trigger` in a finished run. */
const seenTrigger = (run: any) => run.stepLogs.find((log: any) => log.key === 'seen')?.output

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  tasks = await createCollection(server, owner.token, freshName('tasks'), [
    { name: 'title', type: 'text', required: true },
  ])
})
afterAll(async () => {
  await server?.stop()
})

describe('webhook trigger', () => {
  it('starts a run on POST: 202 with success, runId and message; $trigger has the body and method', async () => {
    const flow = await activeFlow('webhook', {})
    const url = `${BASE}/webhook/${flow.webhookEndpoint!.token}`
    const reply = await call('POST', url, { body: { order: 42 } })
    expect(reply.status, reply.text).toBe(202)
    expect(reply.body).toEqual({ success: true, runId: expect.any(String), message: expect.any(String) })
    const [run] = await finishedRuns(flow.id, 1)
    expect(run.runId).toBe(reply.body.runId)
    expect(run.status).toBe('completed')
    expect(seenTrigger(run)).toMatchObject({ event: null, collection: null, method: 'POST', body: { order: 42 } })
    // Other methods than allowed_methods (POST by default): 405, no run.
    expectError(await call('GET', url), 405, 'method_not_allowed')
    expectError(await call('PUT', url, { body: {} }), 405, 'method_not_allowed')
    expect(await runsOf(flow.id)).toHaveLength(1)
  })

  it('takes GET query parameters as $trigger.body, and answers on the deprecated /api/automate alias', async () => {
    const flow = await activeFlow('webhook', { allowed_methods: ['GET', 'POST'] })
    const get = await call('GET', `${BASE}/webhook/${flow.webhookEndpoint!.token}?status=paid&tag=a&tag=b`)
    expect(get.status, get.text).toBe(202)
    const alias = await call('POST', `/api/automate/webhook/${flow.webhookEndpoint!.token}`, { body: { via: 'alias' } })
    expect(alias.status, alias.text).toBe(202)
    expect(alias.headers.get('deprecation')).toBeTruthy()
    const runs = await finishedRuns(flow.id, 2)
    expect(seenTrigger(runs[0])).toMatchObject({ method: 'GET', body: { status: 'paid', tag: ['a', 'b'] } })
    expect(seenTrigger(runs[1])).toMatchObject({ method: 'POST', body: { via: 'alias' } })
  })

  it('with require_auth, runs only with the secret, as Bearer or bare; missing or wrong is 401 and runs nothing', async () => {
    const flow = await activeFlow('webhook', { require_auth: true, secret: 'whsec-0123456789' })
    const url = `${BASE}/webhook/${flow.webhookEndpoint!.token}`
    expectError(await call('POST', url, { body: {} }), 401, 'unauthorized')
    expectError(
      await call('POST', url, { body: {}, headers: { Authorization: 'Bearer whsec-wrong' } }),
      401,
      'unauthorized',
    )
    expectError(
      await call('POST', url, { body: {}, headers: { Authorization: 'whsec-012345678' } }),
      401,
      'unauthorized',
    )
    expect(await runsOf(flow.id)).toEqual([])
    expect((await call('POST', url, { body: {}, headers: { Authorization: 'Bearer whsec-0123456789' } })).status).toBe(
      202,
    )
    expect((await call('POST', url, { body: {}, headers: { Authorization: 'whsec-0123456789' } })).status).toBe(202)
    await finishedRuns(flow.id, 2)
  })

  it('with ip_allowlist, refuses other addresses (403) before anything runs', async () => {
    const outside = await activeFlow('webhook', { ip_allowlist: ['203.0.113.0/24'] })
    expectError(await call('POST', `${BASE}/webhook/${outside.webhookEndpoint!.token}`, { body: {} }), 403, 'forbidden')
    expect(await runsOf(outside.id)).toEqual([])
    const inside = await activeFlow('webhook', { ip_allowlist: ['127.0.0.1', '::1'] })
    expect((await call('POST', `${BASE}/webhook/${inside.webhookEndpoint!.token}`, { body: {} })).status).toBe(202)
  })

  it('answers 404 for an unknown token and for an inactive flow', async () => {
    expectError(await call('POST', `${BASE}/webhook/no-such-token`, { body: {} }), 404, 'not_found')
    const flow = await activeFlow('webhook', {})
    // Called while active first, so the token is known to the lookup's cache: deactivating must still win.
    expect((await call('POST', `${BASE}/webhook/${flow.webhookEndpoint!.token}`, { body: {} })).status).toBe(202)
    const before = (await runsOf(flow.id)).length
    await setStatus(flow.id, 'inactive')
    expectError(await call('POST', `${BASE}/webhook/${flow.webhookEndpoint!.token}`, { body: {} }), 404, 'not_found')
    expect((await runsOf(flow.id)).length).toBe(before)
  })

  it('refuses malformed JSON with 400 and runs nothing', async () => {
    const flow = await activeFlow('webhook', {})
    const reply = await call('POST', `${BASE}/webhook/${flow.webhookEndpoint!.token}`, {
      rawBody: '{"order":',
      headers: { 'content-type': 'application/json' },
    })
    expectError(reply, 400, 'invalid_request')
    expect(await runsOf(flow.id)).toEqual([])
  })
})

describe('event_action trigger', () => {
  it('starts a run after a record write, with the event payload as $trigger.body and the writer as initiator', async () => {
    const flow = await activeFlow('event_action', { events: ['record.create', 'record.update'] }, [echo], {
      collections: [tasks],
    })
    const record = await createRecord(server, editor.token, tasks, { title: 'Write the docs' })
    const id = (record.data ?? record).id as string
    const [run] = await finishedRuns(flow.id, 1)
    const seen = seenTrigger(run)
    expect(seen).toMatchObject({
      event: 'record.create',
      collection: tasks,
      body: {
        collection: tasks,
        before: null,
        after: { id, title: 'Write the docs' },
        principal: { id: editor.id, kind: 'user', role: 'editor' },
      },
    })
    expect(run.actingAs).toMatchObject({ userId: editor.id })
    // Another collection is out of the flow's scope.
    const other = await createCollection(server, owner.token, freshName('other'), [
      { name: 'title', type: 'text', required: true },
    ])
    await createRecord(server, owner.token, other, { title: 'elsewhere' })
    const updated = await call('PATCH', recordsPath(tasks, id), {
      token: editor.token,
      body: { title: 'Docs written' },
    })
    expect(updated.status, updated.text).toBe(200)
    const runs = await finishedRuns(flow.id, 2)
    expect(seenTrigger(runs[1])).toMatchObject({
      event: 'record.update',
      body: { changes: { title: { before: 'Write the docs', after: 'Docs written' } } },
    })
  })
})

describe('event_filter trigger', () => {
  it('rejects the write with the flow message and status: nothing written, no event', async () => {
    const collection = await createCollection(server, owner.token, freshName('guarded'), [
      { name: 'title', type: 'text', required: true },
    ])
    const flow = await activeFlow(
      'event_filter',
      { events: ['record.create'] },
      [
        {
          key: 'refuse',
          type: 'throw_error',
          config: { message: 'Titles need more than one character', statusCode: 422 },
          condition: { field: '$trigger.body.data.title', operator: 'eq', value: 'x' },
        },
      ],
      { collections: [collection] },
    )
    const events: RecordEvent[] = []
    const off = server.app.events.on(
      'record.create',
      (event) => void (event.collection === collection && events.push(event)),
    )
    try {
      const refused = await call('POST', recordsPath(collection), { token: editor.token, body: { title: 'x' } })
      expectError(refused, 422, 'validation_error')
      expect(refused.body.message).toBe('Titles need more than one character')
      expect(refused.body.details).toMatchObject({ flowId: flow.id })
      expect(await listAll(server, owner.token, collection)).toEqual([])
      const accepted = await call('POST', recordsPath(collection), { token: editor.token, body: { title: 'fine' } })
      expect(accepted.status, accepted.text).toBe(201)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(events.map((e) => e.after?.title)).toEqual(['fine'])
      expect((await listAll(server, owner.token, collection)).map((r) => r.title)).toEqual(['fine'])
    } finally {
      off()
    }
  })

  it('rejects with 400 on a stop with status error', async () => {
    const collection = await createCollection(server, owner.token, freshName('stopped'), [
      { name: 'title', type: 'text', required: true },
    ])
    await activeFlow(
      'event_filter',
      { events: ['record.create'] },
      [{ key: 'halt', type: 'stop', config: { status: 'error', message: 'Closed for the day' } }],
      { collections: [collection] },
    )
    const refused = await call('POST', recordsPath(collection), { token: editor.token, body: { title: 'anything' } })
    expectError(refused, 400, 'invalid_request')
    expect(refused.body.message).toBe('Closed for the day')
    expect(await listAll(server, owner.token, collection)).toEqual([])
  })

  it('replaces the incoming values with the output of its step keyed data', async () => {
    const collection = await createCollection(server, owner.token, freshName('shaped'), [
      { name: 'title', type: 'text', required: true },
      { name: 'slug', type: 'text', required: false },
    ])
    await activeFlow(
      'event_filter',
      { events: ['record.create', 'record.update'] },
      [
        {
          key: 'data',
          type: 'set_variable',
          config: {
            key: 'data',
            value: '{{= $merge([$trigger.body.data, {"slug": $lowercase($trigger.body.data.title)}]) }}',
          },
        },
      ],
      { collections: [collection] },
    )
    const created = await call('POST', recordsPath(collection), { token: editor.token, body: { title: 'Hello' } })
    expect(created.status, created.text).toBe(201)
    const [stored] = await listAll(server, owner.token, collection)
    expect(stored).toMatchObject({ title: 'Hello', slug: 'hello' })
  })
})

describe('manual trigger', () => {
  it('starts a run with the collection, selection and inputs checked against the config (422 naming the field)', async () => {
    const flow = await activeFlow('manual', {
      manual_type: 'collection',
      collections: [tasks],
      selection: 'single',
      input_fields: [{ name: 'reason', type: 'text', required: true }],
      confirm: { message: 'Sure?' },
    })
    const path = `${BASE}/flows/${flow.id}/trigger`
    const ok = { collection: tasks, ids: ['r1'], input: { reason: 'done' }, confirmed: true }
    for (const [body, field] of [
      [{ ...ok, collection: 'elsewhere' }, 'collection'],
      [{ ...ok, ids: [] }, 'ids'],
      [{ ...ok, input: {} }, 'input.reason'],
      [{ ...ok, confirmed: false }, 'confirmed'],
    ] as const) {
      const reply = await call('POST', path, { token: editor.token, body })
      expectError(reply, 422, 'validation_error')
      expect(reply.body.details.field).toBe(field)
    }
    expect(await runsOf(flow.id)).toEqual([])
    const started = await call('POST', path, { token: editor.token, body: ok })
    expect(started.status, started.text).toBe(202)
    expect(started.body.data).toMatchObject({
      runId: expect.any(String),
      flowId: flow.id,
      startedAt: expect.any(String),
    })
    const [run] = await finishedRuns(flow.id, 1)
    expect(seenTrigger(run)).toMatchObject({
      collection: tasks,
      body: { collection: tasks, ids: ['r1'], input: { reason: 'done' } },
    })
    expect(run.actingAs).toMatchObject({ userId: editor.id })
  })

  it('needs execute (viewer 403, anonymous 401) and a manual flow (409)', async () => {
    const flow = await activeFlow('manual', {})
    expectError(
      await call('POST', `${BASE}/flows/${flow.id}/trigger`, { token: viewer.token, body: {} }),
      403,
      'forbidden',
    )
    expectError(await call('POST', `${BASE}/flows/${flow.id}/trigger`, { body: {} }), 401, 'unauthorized')
    const webhook = await activeFlow('webhook', {})
    expectError(
      await call('POST', `${BASE}/flows/${webhook.id}/trigger`, { token: owner.token, body: {} }),
      409,
      'conflict',
    )
    expectError(await call('POST', `${BASE}/flows/nope/trigger`, { token: owner.token, body: {} }), 404, 'not_found')
  })
})

describe('api_endpoint trigger', () => {
  it('needs execute by default, answers only its method, and starts a run initiated by the caller', async () => {
    const flow = await activeFlow('api_endpoint', { method: 'POST' })
    const path = `${BASE}/endpoint/${flow.id}`
    expectError(await call('POST', path, { body: {} }), 401, 'unauthorized')
    expectError(await call('POST', path, { token: viewer.token, body: {} }), 403, 'forbidden')
    expectError(await call('GET', path, { token: editor.token }), 405, 'method_not_allowed')
    const started = await call('POST', path, { token: editor.token, body: { email: 'a@example.com' } })
    expect(started.status, started.text).toBe(202)
    const [run] = await finishedRuns(flow.id, 1)
    expect(seenTrigger(run)).toMatchObject({ method: 'POST', body: { email: 'a@example.com' } })
    expect(run.actingAs).toMatchObject({ userId: editor.id })
  })

  it('lets anyone call a flow without require_auth', async () => {
    const flow = await activeFlow('api_endpoint', { method: 'GET', require_auth: false })
    const started = await call('GET', `${BASE}/endpoint/${flow.id}?q=1`)
    expect(started.status, started.text).toBe(202)
    const [run] = await finishedRuns(flow.id, 1)
    expect(seenTrigger(run)).toMatchObject({ method: 'GET', body: { q: '1' } })
  })
})

describe('app_event trigger', () => {
  it('starts a run on sign-in with the event as $trigger.body, initiated by the person', async () => {
    const flow = await activeFlow('app_event', { events: ['user.login'] })
    const signedIn = await call('POST', '/api/auth/sign-in/email', {
      body: { email: editor.email, password: editor.password },
    })
    expect(signedIn.status, signedIn.text).toBe(200)
    const [run] = await finishedRuns(flow.id, 1)
    expect(seenTrigger(run)).toMatchObject({
      event: 'user.login',
      body: { userId: editor.id, method: 'email', principal: { id: editor.id, kind: 'user' } },
    })
    expect(run.actingAs).toMatchObject({ userId: editor.id })
  })
})

describe('schedule trigger', () => {
  it('refuses to activate a schedule with an unknown time zone (422)', async () => {
    const created = await call('POST', `${BASE}/flows`, {
      token: owner.token,
      body: {
        name: 'tz',
        triggerType: 'schedule',
        triggerConfig: { cron: '0 9 * * *', timezone: 'Mars/Olympus' },
        operations: [echo],
      },
    })
    expect(created.status, created.text).toBe(201)
    expect(
      (
        await call('POST', `${BASE}/flows/${created.body.data.id}/publish`, {
          token: owner.token,
          body: { changeSummary: 'x' },
        })
      ).status,
    ).toBe(200)
    expectError(
      await call('PATCH', `${BASE}/flows/${created.body.data.id}/status`, {
        token: owner.token,
        body: { status: 'active' },
      }),
      422,
      'validation_error',
    )
  })
})

describe('schedule trigger on the app clock', () => {
  // A server of its own on a manual clock: the queue's ticks move only when the test advances time.
  let timed: TestServer
  let clock: ManualClock
  let token: string
  beforeAll(async () => {
    // Saturday 28 March 2026, 23:00 UTC (midnight in Berlin): the night clocks spring forward.
    clock = createManualClock(Date.UTC(2026, 2, 28, 23))
    // The in-process queue: its ticks follow the app clock (BullMQ on Redis runs on real time).
    timed = await startServer({ REDIS_URL: '' }, { clock })
    token = (await signUpOwner(timed)).token
  })
  afterAll(async () => {
    await timed?.stop()
  })

  async function timedCall(method: string, path: string, body?: unknown): Promise<Reply> {
    return timed.request(method, path, { token, ...(body === undefined ? {} : { body }) })
  }
  async function scheduledRuns(flowId: string): Promise<string[]> {
    await clock.advance(0)
    const reply = await timedCall('GET', `${BASE}/runs?flow_id=${flowId}&limit=100`)
    expect(reply.status, reply.text).toBe(200)
    const details = await Promise.all(
      (reply.body.data as { runId: string }[]).map(
        async (r) => (await timedCall('GET', `${BASE}/runs/${r.runId}`)).body.data,
      ),
    )
    return details.map((d) => d.trigger.body.scheduledAt as string).sort()
  }

  it('runs at each tick in the flow zone across the spring-forward change, and stops when deactivated', async () => {
    const created = await timedCall('POST', `${BASE}/flows`, {
      name: 'nightly',
      triggerType: 'schedule',
      triggerConfig: { cron: '30 2 * * *', timezone: 'Europe/Berlin' },
      operations: [echo],
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.data.id as string
    expect((await timedCall('POST', `${BASE}/flows/${id}/publish`, { changeSummary: 'v1' })).status).toBe(200)
    // Not active yet: no tick runs.
    await clock.advance(30 * 60_000)
    expect(await scheduledRuns(id)).toEqual([])
    expect((await timedCall('PATCH', `${BASE}/flows/${id}/status`, { status: 'active' })).status).toBe(200)
    // 02:30 does not exist in Berlin on 29 March 2026: it runs right after the gap, at 03:00 CEST (01:00Z).
    await clock.advance(2 * 3_600_000)
    expect(await scheduledRuns(id)).toEqual(['2026-03-29T01:00:00.000Z'])
    expect((await timedCall('PATCH', `${BASE}/flows/${id}/status`, { status: 'inactive' })).status).toBe(200)
    // To just before the next 02:30 (00:30Z on 30 March), each timer once, then minute by minute through it:
    // a whole day of advance stops at every minute's schedule tick (docs/testing.md, "Time").
    await clock.jump(23 * 3_600_000)
    await clock.advance(2 * 3_600_000)
    expect(await scheduledRuns(id)).toHaveLength(1)
  })
})

describe.runIf(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)(
  'schedule trigger on two instances (PostgreSQL + Redis)',
  () => {
    let a: TestServer
    let b: TestServer
    let token: string
    beforeAll(async () => {
      a = await startServer()
      b = await startSibling(a, {})
      token = (await signUpOwner(a)).token
    })
    afterAll(async () => {
      await b?.stop()
      await a?.stop()
    })

    it('starts one run per tick across both instances', async () => {
      const on = (server: TestServer, method: string, path: string, body?: unknown) =>
        server.request(method, path, { token, ...(body === undefined ? {} : { body }) })
      const created = await on(a, 'POST', `${BASE}/flows`, {
        name: 'every second',
        triggerType: 'schedule',
        triggerConfig: { cron: '* * * * * *' },
        operations: [echo],
      })
      expect(created.status, created.text).toBe(201)
      const id = created.body.data.id as string
      expect((await on(a, 'POST', `${BASE}/flows/${id}/publish`, { changeSummary: 'v1' })).status).toBe(200)
      // Activated through B: the schedule is shared, whichever instance registered it.
      expect((await on(b, 'PATCH', `${BASE}/flows/${id}/status`, { status: 'active' })).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 4500))
      expect((await on(a, 'PATCH', `${BASE}/flows/${id}/status`, { status: 'inactive' })).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const runs = (await on(a, 'GET', `${BASE}/runs?flow_id=${id}&limit=100`)).body.data as { runId: string }[]
      const ticks = await Promise.all(
        runs.map(
          async (r) => (await on(a, 'GET', `${BASE}/runs/${r.runId}`)).body.data.trigger.body.scheduledAt as string,
        ),
      )
      expect(ticks.length).toBeGreaterThanOrEqual(3)
      expect(new Set(ticks).size).toBe(ticks.length)
    }, 30_000)
  },
)
