import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ConflictError,
  createClient,
  NetworkError,
  NotFoundError,
  RateLimitError,
  UnauthorizedError,
  ValidationError,
  type FlowRunDetail,
  type PlinthClient,
} from '../../packages/client/src/index.js'
import { createCollection, createRecord } from '../api/records-fixtures.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { clientFor } from './realtime-support.js'

// The client's automation part (execute, wait, watch, dry run, cancel, retry) and the tool server's REST
// surface against a running server, with refusals as typed errors.

const BASE = '/api/v1/automate'
const threeSteps = [
  { key: 'a', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body.n}}' } },
  { key: 'b', type: 'math', config: { operation: 'sum', values: ['{{$steps.a}}', 3] } },
  { key: 'c', type: 'condition', config: { rules: { field: '$steps.b.result', operator: 'gt', value: 4 } } },
]

describe('flows', () => {
  let server: TestServer
  let owner: Account
  let client: PlinthClient

  /** Creates a flow, publishes it and (unless `draft`) activates it; answers its id. */
  async function flowOf(operations: unknown[], draft = false): Promise<string> {
    const created = await server.request('POST', `${BASE}/flows`, {
      token: owner.token,
      body: { name: 'SDK flow', triggerType: 'manual', triggerConfig: {}, operations },
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.data.id as string
    if (draft) return id
    const published = await server.request('POST', `${BASE}/flows/${id}/publish`, {
      token: owner.token,
      body: { changeSummary: 'sdk' },
    })
    expect(published.status, published.text).toBe(200)
    const active = await server.request('PATCH', `${BASE}/flows/${id}/status`, {
      token: owner.token,
      body: { status: 'active' },
    })
    expect(active.status, active.text).toBe(200)
    return id
  }

  beforeAll(async () => {
    server = await startServer()
    owner = await signUpOwner(server)
    client = clientFor(server.url, owner.token)
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('executeAndWait: the run once it has ended, with its step logs', async () => {
    const flowId = await flowOf(threeSteps)
    const run = await client.flows.executeAndWait(flowId, { n: 2 })
    expect(run).toMatchObject({ flowId, status: 'completed', error: null, version: 1 })
    expect(run.stepLogs.map((s) => [s.key, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
    ])
    expect(run.stepLogs[1]!.output).toEqual({ result: 5 })
    const listed = await client.flows.runs({ flowId })
    expect(listed.data.map((r) => r.runId)).toEqual([run.runId])
  })

  it('watch: the run at each change, the first read included, ending with its end (here a cancel)', async () => {
    const flowId = await flowOf([{ key: 'wait', type: 'delay', config: { ms: 20_000 } }])
    const started = await client.flows.execute(flowId)
    expect(started).toMatchObject({ flowId, status: 'running' })
    const seen: FlowRunDetail[] = []
    for await (const run of client.flows.watch(started.runId, { intervalMs: 50 })) {
      seen.push(run)
      if (seen.length === 1) await client.flows.cancel(run.runId)
    }
    expect(seen[0]!.status).toBe('running')
    expect(seen.at(-1)!.status).toBe('cancelled')
    // Each yield differs from the one before (a status or a step changed).
    const prints = seen.map((r) => JSON.stringify([r.status, r.stepLogs.map((s) => [s.key, s.status])]))
    expect(new Set(prints).size).toBe(prints.length)
  })

  it('a failed run is an answer carrying its error, not an exception; retry makes a new run of it', async () => {
    const flowId = await flowOf([
      { key: 'boom', type: 'throw_error', config: { message: 'no thanks', statusCode: 418 } },
    ])
    const failed = await client.flows.executeAndWait(flowId, undefined, { intervalMs: 50 })
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'flow_error', message: 'no thanks' } })
    const retried = await client.flows.retry(failed.runId)
    const again = await client.flows.wait(retried.runId, { intervalMs: 50 })
    expect(again).toMatchObject({ status: 'failed', retryOf: failed.runId })
  })

  it('wait stops when its signal aborts; the run goes on', async () => {
    const flowId = await flowOf([{ key: 'wait', type: 'delay', config: { ms: 20_000 } }])
    const started = await client.flows.execute(flowId)
    const stop = new AbortController()
    const waiting = client.flows.wait(started.runId, { intervalMs: 50, signal: stop.signal })
    stop.abort()
    await expect(waiting).rejects.toBeInstanceOf(NetworkError)
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' })
    expect((await client.flows.run(started.runId)).status).toBe('running')
    await client.flows.cancel(started.runId)
    expect((await client.flows.wait(started.runId)).status).toBe('cancelled')
  })

  it('Idempotency-Key: a repeat answers the first run', async () => {
    const flowId = await flowOf(threeSteps)
    const first = await client.flows.execute(flowId, { n: 1 }, { idempotencyKey: 'sdk-once' })
    const again = await client.flows.execute(flowId, { n: 1 }, { idempotencyKey: 'sdk-once' })
    expect(again).toMatchObject({ runId: first.runId, repeated: true })
  })

  it('test: a dry run of the draft', async () => {
    const flowId = await flowOf(threeSteps, true)
    const dry = await client.flows.test(flowId, { n: 5 })
    expect(dry).toMatchObject({ dryRun: true, status: 'completed' })
    expect(dry.steps.map((s) => s.key)).toEqual(['a', 'b', 'c'])
  })

  it('refusals are typed: a draft is 409, a missing flow or run 404, no credential 401', async () => {
    const draft = await flowOf(threeSteps, true)
    await expect(client.flows.execute(draft)).rejects.toBeInstanceOf(ConflictError)
    await expect(client.flows.execute(draft)).rejects.toMatchObject({ status: 409, code: 'conflict' })
    await expect(client.flows.execute('0'.repeat(32))).rejects.toBeInstanceOf(NotFoundError)
    await expect(client.flows.wait('0'.repeat(32))).rejects.toMatchObject({ status: 404, code: 'not_found' })
    await expect(clientFor(server.url).flows.execute(draft)).rejects.toBeInstanceOf(UnauthorizedError)
  })
})

describe('tool server (REST)', () => {
  let server: TestServer
  let owner: Account
  let tools: PlinthClient['tools']

  beforeAll(async () => {
    server = await startServer()
    owner = await signUpOwner(server)
    await createCollection(server, owner.token, 'tickets', [
      { name: 'title', type: 'text', required: true },
      { name: 'status', type: 'text', required: false },
    ])
    for (const status of ['open', 'open', 'done']) {
      await createRecord(server, owner.token, 'tickets', { title: status, status })
    }
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'sdk tools', capabilities: ['collections/tickets:read', 'system/automate:read'] },
    })
    expect(key.status, key.text).toBe(201)
    tools = createClient({ url: server.url, apiKey: key.body.raw }).tools
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('lists tools and resources, invokes a tool, reads a resource', async () => {
    expect((await tools.info()).name).toEqual(expect.any(String))
    const list = await tools.list()
    expect(list.map((t) => t.name)).toContain('aggregate_records')
    expect(list.find((t) => t.name === 'aggregate_records')!.inputSchema).toMatchObject({ type: 'object' })
    const grouped = await tools.invoke<{ groups: { value: string; count: number }[] }>('aggregate_records', {
      collection: 'tickets',
      groupBy: 'status',
    })
    expect(grouped.groups).toEqual([
      { value: 'done', count: 1 },
      { value: 'open', count: 2 },
    ])
    expect((await tools.resources()).map((r) => r.uri)).toContain('service://collections')
    const collections = await tools.readResource<{ collections: { name: string }[] }>('service://collections')
    expect(collections.content.collections.map((c) => c.name)).toEqual(['tickets'])
  })

  it('refusals are typed: bad arguments 422 with the issues, unknown tool 404, a session 401, the rate limit 429', async () => {
    const bad = tools.invoke('aggregate_records', { collection: 5 })
    await expect(bad).rejects.toBeInstanceOf(ValidationError)
    await expect(bad).rejects.toMatchObject({
      status: 422,
      code: 'validation_error',
      details: { issues: [expect.objectContaining({ path: 'arguments.collection' })] },
    })
    await expect(tools.invoke('no_such_tool')).rejects.toBeInstanceOf(NotFoundError)
    await expect(clientFor(server.url, owner.token).tools.list()).rejects.toBeInstanceOf(UnauthorizedError)

    const limited = await server.request('PATCH', '/api/v1/settings', {
      token: owner.token,
      body: { 'ai.mcp_rate_limit': 1 },
    })
    expect(limited.status, limited.text).toBe(200)
    let refusal: unknown
    for (let i = 0; i < 3 && !refusal; i++) await tools.list().catch((err: unknown) => (refusal = err))
    expect(refusal).toBeInstanceOf(RateLimitError)
    expect(refusal).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: expect.any(Number) })
  })
})
