import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StepError } from '../types.js'
import { networkRig } from '../network-test-rig.js'
import { webhookDispatch } from './webhook-dispatch.js'

let rig: Awaited<ReturnType<typeof networkRig>>
const SECRET = 'whsec-dispatch-1'

beforeAll(async () => {
  rig = await networkRig((req, res) => {
    if (req.path === '/hook') {
      // The receiver checks the signature as the spec says: HMAC-SHA256 of the body, keyed with the secret.
      const expected = `sha256=${createHmac('sha256', SECRET).update(req.body).digest('hex')}`
      const signature = req.headers['x-service-signature']
      if (signature !== undefined && signature !== expected) return void res.writeHead(401).end('bad signature')
      return void res.writeHead(200).end('ok')
    }
    if (req.path === '/gone') return void res.writeHead(410).end()
    if (req.path === '/busy') return void res.writeHead(503).end()
    if (req.path === '/to-loopback')
      return void res.writeHead(308, { location: `http://127.0.0.1:${rig.server.port}/hook` }).end()
    res.writeHead(404).end()
  })
})
afterAll(() => rig.close())

const parse = (config: Record<string, unknown>) => webhookDispatch.configSchema.parse(config)
const run = async (config: Record<string, unknown>, data?: Record<string, unknown>) =>
  (await webhookDispatch.run(parse(config), rig.context(data).ctx)) as Record<string, any>
const failure = async (config: Record<string, unknown>): Promise<StepError> => {
  const err = await webhookDispatch.run(parse(config), rig.context().ctx).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  return err as StepError
}
const last = () => rig.server.received[rig.server.received.length - 1]!

describe('webhook_dispatch config', () => {
  const ok = (config: Record<string, unknown>) =>
    webhookDispatch.configSchema.safeParse({ url: 'https://hooks.example.com/x', ...config }).success
  it('timeout_ms is 100-30000, default 10000', () => {
    expect(parse({ url: 'https://e.com' }).timeout_ms).toBe(10_000)
    expect(ok({ timeout_ms: 99 })).toBe(false)
    expect(ok({ timeout_ms: 100 })).toBe(true)
    expect(ok({ timeout_ms: 30_000 })).toBe(true)
    expect(ok({ timeout_ms: 30_001 })).toBe(false)
  })
  it('url is required; payload is an object; secret up to 1000 characters', () => {
    expect(webhookDispatch.configSchema.safeParse({}).success).toBe(false)
    expect(ok({ payload: [1] })).toBe(false)
    expect(ok({ payload: { a: 1 } })).toBe(true)
    expect(ok({ secret: 's'.repeat(1000) })).toBe(true)
    expect(ok({ secret: 's'.repeat(1001) })).toBe(false)
  })
})

describe('webhook_dispatch', () => {
  it('signs the JSON payload: X-Service-Signature sha256=<hex HMAC>, X-Service-Timestamp ISO; the receiver verifies it', async () => {
    const output = await run({ url: `${rig.base}/hook`, payload: { order: 7, note: 'ü' }, secret: SECRET })
    expect(output).toEqual({ status: 200, durationMs: expect.any(Number), signed: true })
    const got = last()
    expect(got.method).toBe('POST')
    expect(got.headers['content-type']).toBe('application/json')
    expect(JSON.parse(got.body)).toEqual({ order: 7, note: 'ü' })
    expect(got.headers['x-service-signature']).toBe(
      `sha256=${createHmac('sha256', SECRET).update(got.body).digest('hex')}`,
    )
    expect(got.headers['x-service-timestamp']).toBe('2026-01-01T00:00:00.000Z') // the run's clock
  })
  it('a receiver holding another secret refuses it (the signature really depends on the secret)', async () => {
    expect(await failure({ url: `${rig.base}/hook`, payload: { a: 1 }, secret: 'not-the-secret' })).toMatchObject({
      code: 'webhook_failed',
      details: { status: 401 },
    })
  })
  it('sends the trigger body by default, unsigned without a secret; a configured header cannot replace the signature', async () => {
    expect(await run({ url: `${rig.base}/hook` }, { $trigger: { body: { from: 'trigger' } } })).toMatchObject({
      signed: false,
    })
    expect(JSON.parse(last().body)).toEqual({ from: 'trigger' })
    expect(last().headers['x-service-signature']).toBeUndefined()
    await run({
      url: `${rig.base}/hook`,
      payload: { a: 1 },
      secret: SECRET,
      headers: { 'X-Service-Signature': 'sha256=forged', 'X-Extra': 'yes' },
    })
    expect(last().headers['x-service-signature']).toBe(
      `sha256=${createHmac('sha256', SECRET).update('{"a":1}').digest('hex')}`,
    )
    expect(last().headers['x-extra']).toBe('yes')
  })
  it('fails on an answer other than 2xx: retryable after 5xx, not after 410', async () => {
    expect(await failure({ url: `${rig.base}/busy` })).toMatchObject({ code: 'webhook_failed', retryable: true })
    expect(await failure({ url: `${rig.base}/gone` })).toMatchObject({ code: 'webhook_failed', retryable: false })
  })
  it('refuses private addresses: a loopback literal, a private name, a redirect to loopback', async () => {
    const before = rig.server.received.length
    expect((await failure({ url: `http://127.0.0.1:${rig.server.port}/hook`, secret: SECRET })).code).toBe(
      'blocked_address',
    )
    expect((await failure({ url: `http://private.test:${rig.server.port}/hook` })).code).toBe('blocked_address')
    expect(rig.server.received.length).toBe(before)
    expect((await failure({ url: `${rig.base}/to-loopback` })).code).toBe('blocked_address')
    expect(rig.server.received.length).toBe(before + 1)
  })
})
