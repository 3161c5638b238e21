import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StepError } from '../types.js'
import { httpRequest } from './http-request.js'
import { networkRig } from '../network-test-rig.js'

let rig: Awaited<ReturnType<typeof networkRig>>

beforeAll(async () => {
  rig = await networkRig((req, res) => {
    if (req.path === '/json')
      return void res
        .writeHead(200, { 'content-type': 'application/json', 'x-reply': 'yes' })
        .end(JSON.stringify({ ok: true, got: req.body }))
    if (req.path === '/text') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('plain words')
    if (req.path === '/bytes') return void res.writeHead(200).end(Buffer.from([0, 1, 2, 255]))
    if (req.path === '/empty') return void res.writeHead(204).end()
    if (req.path === '/fail') return void res.writeHead(500, 'Broken').end('{"error":"x"}')
    if (req.path === '/to-loopback')
      return void res.writeHead(302, { location: `http://127.0.0.1:${rig.server.port}/json` }).end()
    if (req.path === '/to-private-name')
      return void res.writeHead(307, { location: `http://private.test:${rig.server.port}/json` }).end()
    if (req.path === '/hang') return // never answers
    res.writeHead(404).end()
  })
})
afterAll(() => rig.close())

const run = async (config: Record<string, unknown>, data?: Record<string, unknown>) => {
  const { ctx, lines } = rig.context(data)
  const output = (await httpRequest.run(httpRequest.configSchema.parse(config), ctx)) as Record<string, any>
  return { output, lines }
}
const failure = async (config: Record<string, unknown>): Promise<StepError> => {
  const { ctx } = rig.context()
  const err = await httpRequest.run(httpRequest.configSchema.parse(config), ctx).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  return err as StepError
}
const last = () => rig.server.received[rig.server.received.length - 1]!

describe('http_request config', () => {
  const ok = (config: Record<string, unknown>) =>
    httpRequest.configSchema.safeParse({ url: 'https://example.com', ...config }).success
  it('timeout_ms is 100-30000, default 10000', () => {
    expect(httpRequest.configSchema.parse({ url: 'https://example.com' })).toMatchObject({
      method: 'GET',
      responseType: 'json',
      timeout_ms: 10_000,
    })
    expect(ok({ timeout_ms: 99 })).toBe(false)
    expect(ok({ timeout_ms: 100 })).toBe(true)
    expect(ok({ timeout_ms: 101 })).toBe(true)
    expect(ok({ timeout_ms: 29_999 })).toBe(true)
    expect(ok({ timeout_ms: 30_000 })).toBe(true)
    expect(ok({ timeout_ms: 30_001 })).toBe(false)
    expect(ok({ timeout_ms: 1000.5 })).toBe(false)
  })
  it('url is required and http or https', () => {
    expect(httpRequest.configSchema.safeParse({}).success).toBe(false)
    expect(ok({ url: 'ftp://example.com' })).toBe(false)
    expect(ok({ url: 'file:///etc/passwd' })).toBe(false)
    expect(ok({ url: 'http://example.com' })).toBe(true)
    const long = (n: number) => `https://e.com/${'a'.repeat(n - 'https://e.com/'.length)}`
    expect(ok({ url: long(8192) })).toBe(true)
    expect(ok({ url: long(8193) })).toBe(false)
  })
  it('auth values: bearer token 1-8192, basic password up to 8192', () => {
    expect(ok({ auth: { type: 'bearer', token: '' } })).toBe(false)
    expect(ok({ auth: { type: 'bearer', token: 't'.repeat(8192) } })).toBe(true)
    expect(ok({ auth: { type: 'bearer', token: 't'.repeat(8193) } })).toBe(false)
    expect(ok({ auth: { type: 'basic', username: 'u', password: 'p'.repeat(8193) } })).toBe(false)
  })
  it('takes the seven methods and three response types only', () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) expect(ok({ method })).toBe(true)
    expect(ok({ method: 'TRACE' })).toBe(false)
    for (const responseType of ['json', 'text', 'binary']) expect(ok({ responseType })).toBe(true)
    expect(ok({ responseType: 'stream' })).toBe(false)
  })
  it('auth is bearer with token, basic with username and password, or api_key with header and token', () => {
    expect(ok({ auth: { type: 'bearer', token: 't' } })).toBe(true)
    expect(ok({ auth: { type: 'bearer' } })).toBe(false)
    expect(ok({ auth: { type: 'basic', username: 'u', password: 'p' } })).toBe(true)
    expect(ok({ auth: { type: 'api_key', header: 'X-Key', token: 't' } })).toBe(true)
    expect(
      httpRequest.configSchema.parse({ url: 'https://e.com', auth: { type: 'api_key', token: 't' } }).auth,
    ).toEqual({ type: 'api_key', header: 'X-API-Key', token: 't' })
    expect(ok({ auth: { type: 'oauth', token: 't' } })).toBe(false)
    expect(ok({ auth: { type: 'api_key', header: 'bad header', token: 't' } })).toBe(false)
  })
  it('headers: at most 50, names must be HTTP tokens', () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, 'v']))
    expect(ok({ headers: many(50) })).toBe(true)
    expect(ok({ headers: many(51) })).toBe(false)
    expect(ok({ headers: { 'bad name': 'v' } })).toBe(false)
  })
  it('refuses unknown keys', () => {
    expect(ok({ timeout: 100 })).toBe(false)
  })
})

describe('http_request', () => {
  it('GETs and reads JSON: status, statusText, headers, body, durationMs', async () => {
    const { output } = await run({ url: `${rig.base}/json` })
    expect(output).toEqual({
      status: 200,
      statusText: 'OK',
      headers: expect.objectContaining({ 'x-reply': 'yes' }),
      body: { ok: true, got: '' },
      durationMs: expect.any(Number),
    })
    expect(last().method).toBe('GET')
  })
  it('sends an object body as JSON with its content type, a string body as it is', async () => {
    const { output } = await run({ url: `${rig.base}/json`, method: 'POST', body: { a: [1, 2] } })
    expect(output.body.got).toBe('{"a":[1,2]}')
    expect(last().headers['content-type']).toBe('application/json')
    await run({
      url: `${rig.base}/json`,
      method: 'PUT',
      body: 'raw=1',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    })
    expect(last()).toMatchObject({ method: 'PUT', body: 'raw=1' })
    expect(last().headers['content-type']).toBe('application/x-www-form-urlencoded')
  })
  it('reads text, binary as base64, an empty body as null, and non-JSON as text with a warning', async () => {
    expect((await run({ url: `${rig.base}/text`, responseType: 'text' })).output.body).toBe('plain words')
    expect((await run({ url: `${rig.base}/bytes`, responseType: 'binary' })).output.body).toBe(
      Buffer.from([0, 1, 2, 255]).toString('base64'),
    )
    expect((await run({ url: `${rig.base}/empty` })).output).toMatchObject({ status: 204, body: null })
    const { output, lines } = await run({ url: `${rig.base}/text` })
    expect(output.body).toBe('plain words')
    expect(lines).toEqual([{ level: 'warn', message: 'The response body is not JSON; it is given as text' }])
  })
  it('outputs a 500 as it is (a flow decides what it means)', async () => {
    expect((await run({ url: `${rig.base}/fail` })).output).toMatchObject({
      status: 500,
      statusText: 'Broken',
      body: { error: 'x' },
    })
  })
  it('sends each auth type as its header', async () => {
    await run({ url: `${rig.base}/json`, auth: { type: 'bearer', token: 'tok-1' } })
    expect(last().headers.authorization).toBe('Bearer tok-1')
    await run({ url: `${rig.base}/json`, auth: { type: 'basic', username: 'ann', password: 'pw:1' } })
    expect(last().headers.authorization).toBe(`Basic ${Buffer.from('ann:pw:1').toString('base64')}`)
    await run({ url: `${rig.base}/json`, auth: { type: 'api_key', header: 'X-Token', token: 'k-1' } })
    expect(last().headers['x-token']).toBe('k-1')
  })
  it('times out as timed_out', async () => {
    const err = await failure({ url: `${rig.base}/hang`, timeout_ms: 100 })
    expect(err.code).toBe('timed_out')
  })
})

describe('http_request refuses private and internal addresses', () => {
  it('a loopback literal, before anything is sent', async () => {
    const before = rig.server.received.length
    const err = await failure({ url: `http://127.0.0.1:${rig.server.port}/json` })
    expect(err).toMatchObject({ code: 'blocked_address', retryable: false })
    expect(rig.server.received.length).toBe(before)
  })
  it('localhost, a name resolving to a private address, and the metadata address', async () => {
    const before = rig.server.received.length
    for (const url of [
      `http://localhost:${rig.server.port}/json`,
      `http://private.test:${rig.server.port}/json`,
      'http://metadata.test/latest/meta-data/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      expect((await failure({ url })).code, url).toBe('blocked_address')
    }
    expect(rig.server.received.length).toBe(before)
  })
  it('a redirect to a loopback address or to a private name', async () => {
    for (const path of ['/to-loopback', '/to-private-name']) {
      const before = rig.server.received.length
      expect((await failure({ url: `${rig.base}${path}` })).code).toBe('blocked_address')
      // Only the first hop (the redirecting answer) reached the server.
      expect(rig.server.received.length).toBe(before + 1)
    }
  })
  it('never quotes the path, query or a credential in its error', async () => {
    const err = await failure({
      url: `http://private.test:${rig.server.port}/secret-path?token=abc`,
      auth: { type: 'bearer', token: 'tok-zzz' },
    })
    expect(err.message).not.toMatch(/secret-path|abc|tok-zzz/)
  })
})
