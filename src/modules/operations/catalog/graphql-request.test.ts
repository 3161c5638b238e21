import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StepError } from '../types.js'
import { graphqlRequest } from './graphql-request.js'
import { networkRig } from '../network-test-rig.js'

let rig: Awaited<ReturnType<typeof networkRig>>

beforeAll(async () => {
  rig = await networkRig((req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (req.path === '/graphql') {
      const { query, variables, operationName } = JSON.parse(req.body) as {
        query: string
        variables?: { id?: string }
        operationName?: string
      }
      if (query.includes('broken'))
        return void json(200, { data: null, errors: [{ message: 'Cannot query field "broken"' }] })
      return void json(200, { data: { item: { id: variables?.id ?? null, op: operationName ?? null } } })
    }
    if (req.path === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>')
    if (req.path === '/plain-json') return void json(200, { hello: 'world' })
    if (req.path === '/down') return void res.writeHead(503).end('unavailable')
    if (req.path === '/to-loopback')
      return void res.writeHead(307, { location: `http://127.0.0.1:${rig.server.port}/graphql` }).end()
    res.writeHead(404).end()
  })
})
afterAll(() => rig.close())

const parse = (config: Record<string, unknown>) =>
  graphqlRequest.configSchema.parse({ query: '{ item { id } }', ...config })
const run = async (config: Record<string, unknown>) =>
  (await graphqlRequest.run(parse(config), rig.context().ctx)) as Record<string, any>
const failure = async (config: Record<string, unknown>): Promise<StepError> => {
  const err = await graphqlRequest.run(parse(config), rig.context().ctx).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  return err as StepError
}
const last = () => rig.server.received[rig.server.received.length - 1]!

describe('graphql_request config', () => {
  const ok = (config: Record<string, unknown>) =>
    graphqlRequest.configSchema.safeParse({ url: 'https://api.example.com/graphql', query: '{ a }', ...config }).success
  it('timeout_ms is 100-30000, default 10000', () => {
    expect(graphqlRequest.configSchema.parse({ url: 'https://e.com', query: '{ a }' }).timeout_ms).toBe(10_000)
    expect(ok({ timeout_ms: 99 })).toBe(false)
    expect(ok({ timeout_ms: 100 })).toBe(true)
    expect(ok({ timeout_ms: 30_000 })).toBe(true)
    expect(ok({ timeout_ms: 30_001 })).toBe(false)
  })
  it('url and query are required; query up to 100,000 characters', () => {
    expect(graphqlRequest.configSchema.safeParse({ url: 'https://e.com' }).success).toBe(false)
    expect(graphqlRequest.configSchema.safeParse({ query: '{ a }' }).success).toBe(false)
    expect(ok({ query: '' })).toBe(false)
    expect(ok({ query: 'x'.repeat(100_000) })).toBe(true)
    expect(ok({ query: 'x'.repeat(100_001) })).toBe(false)
  })
  it('variables is an object; operationName text', () => {
    expect(ok({ variables: { id: 1 }, operationName: 'Q' })).toBe(true)
    expect(ok({ variables: [1] })).toBe(false)
    expect(ok({ nope: 1 })).toBe(false)
  })
})

describe('graphql_request', () => {
  it('POSTs { query, variables, operationName } as JSON and outputs data and errors', async () => {
    const output = await run({
      url: `${rig.base}/graphql`,
      variables: { id: 'a1' },
      operationName: 'One',
      headers: { Authorization: 'Bearer g' },
    })
    expect(output).toEqual({ data: { item: { id: 'a1', op: 'One' } }, errors: [], status: 200 })
    expect(last().method).toBe('POST')
    expect(last().headers['content-type']).toBe('application/json')
    expect(last().headers.authorization).toBe('Bearer g')
    expect(JSON.parse(last().body)).toEqual({ query: '{ item { id } }', variables: { id: 'a1' }, operationName: 'One' })
  })
  it('outputs GraphQL errors rather than throwing', async () => {
    expect(await run({ url: `${rig.base}/graphql`, query: '{ broken }' })).toEqual({
      data: null,
      errors: [{ message: 'Cannot query field "broken"' }],
      status: 200,
    })
  })
  it('fails with invalid_response on an answer that is no GraphQL response (retried only after a 5xx)', async () => {
    expect(await failure({ url: `${rig.base}/html` })).toMatchObject({ code: 'invalid_response', retryable: false })
    expect(await failure({ url: `${rig.base}/plain-json` })).toMatchObject({
      code: 'invalid_response',
      retryable: false,
    })
    expect(await failure({ url: `${rig.base}/down` })).toMatchObject({ code: 'invalid_response', retryable: true })
  })
  it('refuses private addresses: a loopback literal, a private name, a redirect to loopback', async () => {
    const before = rig.server.received.length
    expect((await failure({ url: `http://127.0.0.1:${rig.server.port}/graphql` })).code).toBe('blocked_address')
    expect((await failure({ url: `http://private.test:${rig.server.port}/graphql` })).code).toBe('blocked_address')
    expect(rig.server.received.length).toBe(before)
    expect((await failure({ url: `${rig.base}/to-loopback` })).code).toBe('blocked_address')
    expect(rig.server.received.length).toBe(before + 1)
  })
})
