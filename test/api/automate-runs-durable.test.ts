import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'

/**
 * What a caller who was told 202 can rely on (issue 26; decision 054), over real HTTP on SQLite and
 * PostgreSQL: an Idempotency-Key repeated (even 100 times at once) starts one run; past the backlog quota a
 * start is 429 with Retry-After and stores nothing; a failed, cancelled or timed-out run is retried on its
 * version with its payload (retryOf); a failed run leaves a warn line naming flow, run and step.
 * Crashes and lost instances: automate-runs-kill.test.ts; leases and takeover: automate-runs-engine.test.ts.
 */
const BASE = '/api/v1/automate'
let server: TestServer
let owner: Account
let reader: Account

const call = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> =>
  server.request(method, path, { ...(token ? { token } : {}), headers, ...(body === undefined ? {} : { body }) })

async function ok(reply: Promise<Reply>, status = 200): Promise<any> {
  const done = await reply
  expect(done.status, done.text).toBe(status)
  return done.body
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`never happened: ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function activeFlow(flow: Record<string, unknown>): Promise<string> {
  const created = await ok(
    call('POST', `${BASE}/flows`, owner.token, { name: 'Durable', triggerConfig: {}, ...flow }),
    201,
  )
  await ok(call('POST', `${BASE}/flows/${created.data.id}/publish`, owner.token, { changeSummary: 'v1' }))
  await ok(call('PATCH', `${BASE}/flows/${created.data.id}/status`, owner.token, { status: 'active' }))
  return created.data.id
}

const runOf = async (runId: string) => (await ok(call('GET', `${BASE}/runs/${runId}`, owner.token))).data
const ended = (runId: string) =>
  until(
    () => runOf(runId),
    (r) => r.status !== 'pending' && r.status !== 'running',
    `run ${runId} to end`,
  )
const runCount = async (flowId: string) =>
  (await ok(call('GET', `${BASE}/flows/${flowId}/runs?limit=100`, owner.token))).total as number
const quick = [{ key: 'a', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body.n}}' } }]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  reader = await accountWithGrants(server, owner.token, [{ resource: 'system/automate', action: 'read' }])
})
afterAll(async () => {
  await server?.stop()
})

describe('Idempotency-Key', () => {
  it('100 concurrent executes with one key start one run; every answer names it, the repeats marked replayed', async () => {
    const flowId = await activeFlow({ triggerType: 'manual', operations: quick })
    const answers = await Promise.all(
      Array.from({ length: 100 }, () =>
        call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, { n: 1 }, { 'Idempotency-Key': 'order-4711' }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(202))
    const ids = new Set(answers.map((a) => a.body.data.runId))
    expect(ids.size).toBe(1)
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(99)
    expect(answers.filter((a) => a.body.data.repeated === true)).toHaveLength(99)
    await ended([...ids][0]!)
    expect(await runCount(flowId)).toBe(1)
    // Another key is another run; so is no key.
    const other = await ok(
      call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, { n: 2 }, { 'Idempotency-Key': 'order-4712' }),
      202,
    )
    expect(ids.has(other.data.runId)).toBe(false)
    await ok(call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, { n: 3 }), 202)
    await until(
      () => runCount(flowId),
      (n) => n === 3,
      'three runs',
    )
  })

  it('webhook and api_endpoint calls honour it too; a key is per flow', async () => {
    const hook = await activeFlow({ triggerType: 'webhook', operations: quick })
    const token = (await ok(call('GET', `${BASE}/flows/${hook}`, owner.token))).data.webhookEndpoint.token as string
    const sent = await Promise.all(
      [1, 2, 3].map(() =>
        call('POST', `${BASE}/webhook/${token}`, undefined, { n: 1 }, { 'Idempotency-Key': 'evt_1' }),
      ),
    )
    expect(sent.map((s) => s.status)).toEqual([202, 202, 202])
    expect(new Set(sent.map((s) => s.body.runId)).size).toBe(1)
    const endpoint = await activeFlow({
      triggerType: 'api_endpoint',
      triggerConfig: { method: 'POST' },
      operations: quick,
    })
    const called = await Promise.all(
      [1, 2].map(() =>
        call('POST', `${BASE}/endpoint/${endpoint}`, owner.token, { n: 1 }, { 'Idempotency-Key': 'evt_1' }),
      ),
    )
    expect(called.map((s) => s.status)).toEqual([202, 202])
    expect(called[0]!.body.data.runId).toBe(called[1]!.body.data.runId)
    // The same key on another flow is that flow's own.
    expect(called[0]!.body.data.runId).not.toBe(sent[0]!.body.runId)
    await until(
      () => runCount(hook),
      (n) => n === 1,
      'the webhook run',
    )
    await until(
      () => runCount(endpoint),
      (n) => n === 1,
      'the endpoint run',
    )
  })

  it('a malformed key is 400 invalid_request and starts nothing', async () => {
    const flowId = await activeFlow({ triggerType: 'manual', operations: quick })
    for (const key of ['x'.repeat(256), 'has space', 'tab\tinside', 'ünïcode']) {
      const reply = await call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, {}, { 'Idempotency-Key': key })
      expect(reply.status, key).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
    expect(await runCount(flowId)).toBe(0)
  })
})

describe('the backlog quota', () => {
  it('past maxPendingRuns a start is 429 too_many_requests with Retry-After and stores nothing; GET /quotas shows the backlog', async () => {
    await ok(call('PATCH', `${BASE}/quotas`, owner.token, { maxPendingRuns: 2 }))
    try {
      const flowId = await activeFlow({
        triggerType: 'manual',
        operations: [{ key: 'wait', type: 'delay', config: { ms: 3000 } }],
        options: { concurrency: 1 },
      })
      const started = []
      for (let i = 0; i < 3; i++)
        started.push((await ok(call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, {}), 202)).data)
      expect(started.map((s) => s.status)).toEqual(['running', 'pending', 'pending'])
      const refused = await call(
        'POST',
        `${BASE}/flows/${flowId}/execute`,
        owner.token,
        {},
        { 'Idempotency-Key': 'late' },
      )
      expect(refused.status, refused.text).toBe(429)
      expect(refused.body).toMatchObject({
        error: 'too_many_requests',
        details: { quota: 'maxPendingRuns', limit: 2, usage: 2 },
      })
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(await runCount(flowId)).toBe(3)
      const quotas = (await ok(call('GET', `${BASE}/quotas`, owner.token))).data
      expect(quotas).toMatchObject({ limits: { maxPendingRuns: 2 }, usage: { pendingRuns: 2 } })
      // The refused call gave its key back: once there is room, the same key starts a run.
      for (const s of started) await ok(call('POST', `${BASE}/runs/${s.runId}/cancel`, owner.token))
      const later = await ok(
        call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, {}, { 'Idempotency-Key': 'late' }),
        202,
      )
      expect(later.data.repeated).toBeUndefined()
      await ok(call('POST', `${BASE}/runs/${later.data.runId}/cancel`, owner.token))
    } finally {
      await ok(call('PATCH', `${BASE}/quotas`, owner.token, { maxPendingRuns: 10_000 }))
    }
  })
})

describe('POST /runs/:runId/retry', () => {
  it('starts the cancelled run again on its version with its payload, linked by retryOf; refuses active, completed and unknown runs', async () => {
    const flowId = await activeFlow({
      triggerType: 'manual',
      operations: [
        { key: 'wait', type: 'delay', config: { ms: 300 } },
        { key: 'echo', type: 'set_variable', config: { key: 'n', value: '{{$trigger.body.n}}' } },
      ],
    })
    const first = (await ok(call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, { n: 42 }), 202)).data
    expect((await call('POST', `${BASE}/runs/${first.runId}/retry`, owner.token)).status).toBe(409)
    await ok(call('POST', `${BASE}/runs/${first.runId}/cancel`, owner.token))
    expect(await runOf(first.runId)).toMatchObject({ status: 'cancelled', retryOf: null })
    // A newer version does not change what the retry runs.
    await ok(
      call('PATCH', `${BASE}/flows/${flowId}`, owner.token, {
        operations: [{ key: 'other', type: 'set_variable', config: { key: 'y', value: 1 } }],
      }),
    )
    await ok(call('POST', `${BASE}/flows/${flowId}/publish`, owner.token, { changeSummary: 'v2' }))
    expect((await call('POST', `${BASE}/runs/${first.runId}/retry`, reader.token)).status).toBe(403)
    // One who may execute but sees the owner's run redacted cannot read its payload through a retry of their own.
    const executor = await accountWithGrants(server, owner.token, [
      { resource: 'system/automate', action: 'read' },
      { resource: 'system/automate', action: 'execute' },
    ])
    expect((await ok(call('GET', `${BASE}/runs/${first.runId}`, executor.token))).data.redacted).toBe(true)
    const refused = await call('POST', `${BASE}/runs/${first.runId}/retry`, executor.token)
    expect(refused.status, refused.text).toBe(403)
    expect(refused.text).not.toContain('42')
    const retried = (await ok(call('POST', `${BASE}/runs/${first.runId}/retry`, owner.token), 202)).data
    expect(retried.runId).not.toBe(first.runId)
    const done = await ended(retried.runId)
    expect(done).toMatchObject({ status: 'completed', version: 1, retryOf: first.runId, trigger: { body: { n: 42 } } })
    expect(done.stepLogs.map((l: any) => [l.key, l.output])).toEqual([
      ['wait', expect.anything()],
      ['echo', 42],
    ])
    expect((await call('POST', `${BASE}/runs/${retried.runId}/retry`, owner.token)).body.error).toBe('conflict')
    expect((await call('POST', `${BASE}/runs/no-such-run/retry`, owner.token)).status).toBe(404)
  })

  it('a failed run leaves a warn line naming flow, run and step; its retry fails the same way until the cause is fixed', async () => {
    const flowId = await activeFlow({
      triggerType: 'manual',
      operations: [{ key: 'boom', type: 'crud_read', config: { collection: 'no_such_collection' } }],
    })
    const { runId } = (await ok(call('POST', `${BASE}/flows/${flowId}/execute`, owner.token, {}), 202)).data
    expect(await ended(runId)).toMatchObject({ status: 'failed', error: { step: 'boom' } })
    const line = await until(
      async () =>
        server.logs
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.runId === runId && l.level === 40),
      (l) => l !== undefined,
      'the warn line',
    )
    expect(line).toMatchObject({ flowId, runId, step: 'boom', msg: expect.stringContaining('flow run failed') })
    const retried = (await ok(call('POST', `${BASE}/runs/${runId}/retry`, owner.token), 202)).data
    expect(await ended(retried.runId)).toMatchObject({ status: 'failed', retryOf: runId })
  })
})
