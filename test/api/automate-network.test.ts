import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import { startTestServer, tableResolver, type TestServer as Receiver } from '../../src/lib/outbound/test-servers.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd } from './automate-support.js'

/**
 * The network operations inside real flow runs (issue 16 item 5): http_request, graphql_request and
 * webhook_dispatch reach a receiving server through the app's guarded outbound client; the receiver
 * verifies webhook_dispatch's HMAC; credentials (the dispatch secret, a bearer token, an Authorization
 * header) never appear in a run's step log, the flow's export, any reply or the server log; a step aimed at
 * a private address fails with blocked_address. ALLOW_PRIVATE_NETWORK is off: the receiver on 127.0.0.1 is
 * reached as `receiver.test`, the one host the rule is narrowed to let through.
 */
const BASE = '/api/v1/automate'
const MASK = '\u2022'.repeat(8)
const SECRET = `whsec-${randomBytes(10).toString('hex')}`
const TOKEN = `tok-${randomBytes(10).toString('hex')}`
const GQL_TOKEN = `gql-${randomBytes(10).toString('hex')}`

let server: TestServer
let receiver: Receiver
let owner: Account
let base: string
/** Replies that must never hold a credential: runs and exports (a flow read shows real values to system/automate:update, as the spec says). */
const replies: Reply[] = []

const call = async (method: string, path: string, body?: unknown): Promise<Reply> => {
  const reply = await server.request(method, path, { token: owner.token, body })
  if (path.includes('/runs/') || path.endsWith('/export') || path.endsWith('/execute') || path.endsWith('/test'))
    replies.push(reply)
  return reply
}

const flowOf = (operations: unknown[]) => activeFlow(call, 'Network test', operations)
const runOf = (flowId: string, body: unknown) => executeToEnd(call, call, flowId, body)

beforeAll(async () => {
  receiver = await startTestServer((req, res) => {
    if (req.path === '/graphql')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data: { echo: JSON.parse(req.body).variables } }))
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.path }))
  })
  const resolve = tableResolver({ 'receiver.test': ['127.0.0.1'], 'private.test': ['127.0.0.1'] })
  server = await startServer(
    {},
    { outbound: { resolve, isBlocked: (address, host) => host !== 'receiver.test' && isBlockedAddress(address) } },
  )
  owner = await signUpOwner(server)
  base = `http://receiver.test:${receiver.port}`
})
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
})

describe('the catalog describes the network operations', () => {
  it('GET /operations/:type gives each its JSON Schema with timeout_ms 100-30000 (10000); auth lists the three types', async () => {
    for (const type of ['http_request', 'graphql_request', 'webhook_dispatch']) {
      const reply = await call('GET', `${BASE}/operations/${type}`)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.data).toMatchObject({ type, category: 'network', system: false })
      expect(reply.body.data.schema.properties.timeout_ms).toMatchObject({
        type: 'integer',
        minimum: 100,
        maximum: 30_000,
        default: 10_000,
      })
      expect(reply.body.data.schema.required).toContain('url')
    }
    const http = (await call('GET', `${BASE}/operations/http_request`)).body.data.schema.properties
    expect(http.method.enum).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'])
    expect(http.responseType.enum).toEqual(['json', 'text', 'binary'])
    expect(http.auth.oneOf.map((o: any) => o.properties.type.const)).toEqual(['bearer', 'basic', 'api_key'])
  })
})

describe('network operations in a flow run', () => {
  it('dispatch (signed), http_request (bearer) and graphql_request reach the receiver; credentials are masked in the step log and the export', async () => {
    const flowId = await flowOf([
      {
        key: 'notify',
        type: 'webhook_dispatch',
        config: { url: `${base}/hook`, payload: { n: '{{$trigger.body.n}}' }, secret: SECRET },
      },
      {
        key: 'fetch',
        type: 'http_request',
        config: { url: `${base}/items/{{$trigger.body.n}}`, auth: { type: 'bearer', token: TOKEN } },
      },
      {
        key: 'query',
        type: 'graphql_request',
        config: {
          url: `${base}/graphql`,
          query: 'query($n: Int) { echo }',
          variables: { n: '{{$trigger.body.n}}' },
          headers: { Authorization: `Bearer ${GQL_TOKEN}` },
        },
      },
    ])
    const run = await runOf(flowId, { n: 7 })
    expect(run.status, JSON.stringify(run)).toBe('completed')
    const [hook, item, gql] = receiver.received
    expect(JSON.parse(hook!.body)).toEqual({ n: 7 })
    expect(hook!.headers['x-service-signature']).toBe(
      `sha256=${createHmac('sha256', SECRET).update(hook!.body).digest('hex')}`,
    )
    expect(item!.path).toBe('/items/7')
    expect(item!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(gql!.headers.authorization).toBe(`Bearer ${GQL_TOKEN}`)
    const [notify, fetched, query] = run.stepLogs
    expect(notify).toMatchObject({
      status: 'completed',
      input: { secret: MASK },
      output: { status: 200, signed: true },
    })
    expect(fetched).toMatchObject({
      status: 'completed',
      input: { auth: { type: 'bearer', token: MASK } },
      output: { status: 200, body: { path: '/items/7' } },
    })
    expect(query).toMatchObject({
      status: 'completed',
      input: { headers: { Authorization: MASK } },
      output: { data: { echo: { n: 7 } }, errors: [] },
    })
    const exported = await call('GET', `${BASE}/flows/${flowId}/export`)
    expect(exported.status).toBe(200)
    expect(JSON.stringify(exported.body)).toContain(MASK)
  })
  it('a step aimed at a private address fails with blocked_address and reaches nothing', async () => {
    const before = receiver.received.length
    const flowId = await flowOf([
      { key: 'inside', type: 'http_request', config: { url: `http://private.test:${receiver.port}/x` } },
    ])
    const run = await runOf(flowId, {})
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'blocked_address', step: 'inside' })
    expect(receiver.received.length).toBe(before)
  })
  it('a dry run (POST /flows/:id/test) sends nothing: the three have effects', async () => {
    const before = receiver.received.length
    const created = await call('POST', `${BASE}/flows`, {
      name: 'Dry network',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [
        { key: 'notify', type: 'webhook_dispatch', config: { url: `${base}/hook`, secret: SECRET } },
        { key: 'fetch', type: 'http_request', config: { url: `${base}/x`, method: 'DELETE' } },
        { key: 'query', type: 'graphql_request', config: { url: `${base}/graphql`, query: 'mutation { x }' } },
      ],
    })
    expect(created.status, created.text).toBe(201)
    const reply = await call('POST', `${BASE}/flows/${created.body.data.id}/test`, {})
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.steps.map((step: { key: string; status: string }) => step.status)).not.toContain('completed')
    expect(receiver.received.length).toBe(before)
  })
  it('no run, export or log line holds a credential', () => {
    for (const secret of [SECRET, TOKEN, GQL_TOKEN]) {
      for (const reply of replies) expect(reply.text).not.toContain(secret)
      expect(server.logs.join('\n')).not.toContain(secret)
    }
  })
})
