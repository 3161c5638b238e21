import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../lib/errors.js'
import { createRouter, defineRoute, errorResponses, z } from '../lib/http/index.js'
import { createLogger } from '../lib/log.js'
import { send } from '../../test/support/harness.js'
import { createHttpApp } from './create-http-app.js'
import { listen, type RunningServer } from './server.js'

// A router standing in for a module, to exercise the conventions every module relies on.
function probeRouter() {
  const router = createRouter()
  const echo = defineRoute({
    method: 'post',
    path: '/api/v1/probe/echo',
    operationId: 'probe.echo',
    summary: 'Echo',
    permission: null,
    request: {
      body: {
        required: true,
        content: {
          'application/json': { schema: z.object({ name: z.string().min(1), count: z.number().int().optional() }) },
        },
      },
    },
    responses: { 200: { description: 'ok' }, ...errorResponses('invalid_request') },
  })
  const boom = defineRoute({
    method: 'get',
    path: '/api/v1/probe/boom',
    operationId: 'probe.boom',
    summary: 'Throws',
    permission: null,
    responses: { 200: { description: 'never' } },
  })
  const typed = defineRoute({
    method: 'get',
    path: '/api/v1/probe/typed/{id}',
    operationId: 'probe.typed',
    summary: 'Throws a typed error',
    permission: null,
    request: { params: z.object({ id: z.string() }) },
    responses: { 200: { description: 'never' } },
  })
  router.openapi(echo, (c) => c.json({ data: c.req.valid('json') }, 200))
  router.openapi(boom, () => {
    throw new Error('database password is hunter2 at /srv/secret')
  })
  router.openapi(typed, (c) => {
    throw new AppError(
      'rate_limited',
      'Slow down',
      { id: c.req.valid('param').id },
      { headers: { 'Retry-After': '7' } },
    )
  })
  return router
}

let running: RunningServer
const logs: string[] = []
beforeAll(async () => {
  const log = createLogger('info', { write: (l: string) => void logs.push(l) })
  const app = createHttpApp({
    log,
    version: '9.9.9',
    publicUrl: 'http://localhost',
    corsOrigins: ['https://app.example'],
    maxBodyBytes: 2048,
    routers: [probeRouter()],
  })
  running = await listen(app.fetch, { host: '127.0.0.1', port: 0, log })
})
afterAll(async () => {
  await running.stop(1000)
})

const call = (method: string, path: string, options?: Parameters<typeof send>[3]) =>
  send(running.url, method, path, options)

describe('error envelope', () => {
  it('malformed JSON is 400 invalid_request', async () => {
    const r = await call('POST', '/api/v1/probe/echo', {
      rawBody: '{"name":',
      headers: { 'content-type': 'application/json' },
    })
    expect(r.status).toBe(400)
    expect(r.body).toEqual({ error: 'invalid_request', message: expect.stringMatching(/JSON/i), details: {} })
    expect(r.headers.get('x-request-id')).toBeTruthy()
  })

  it('schema violations are 400 invalid_request naming the location', async () => {
    const r = await call('POST', '/api/v1/probe/echo', { body: { name: '', count: 1.5 } })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('invalid_request')
    expect(r.body.details.issues.map((i: { location: string }) => i.location).sort()).toEqual([
      'body.count',
      'body.name',
    ])
  })

  it('a body of another media type is 415', async () => {
    const r = await call('POST', '/api/v1/probe/echo', { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } })
    expect(r.status).toBe(415)
    expect(r.body.error).toBe('unsupported_media_type')
  })

  it('a valid body reaches the handler', async () => {
    const r = await call('POST', '/api/v1/probe/echo', { body: { name: 'a', count: 2 } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ data: { name: 'a', count: 2 } })
  })

  it('the deprecated alias validates the same way', async () => {
    const r = await call('POST', '/api/probe/echo', { body: { name: 'a' } })
    expect(r.status).toBe(200)
    expect(r.headers.get('deprecation')).toBe('true')
    expect(r.headers.get('link')).toBe('</api/v1/probe/echo>; rel="successor-version"')
  })

  it('an unexpected exception is 500 internal, reveals nothing, and is logged with the request id', async () => {
    const r = await call('GET', '/api/v1/probe/boom')
    expect(r.status).toBe(500)
    const id = r.headers.get('x-request-id')!
    expect(r.body).toEqual({ error: 'internal', message: 'Internal server error', details: { requestId: id } })
    expect(r.text).not.toContain('hunter2')
    const logged = logs.map((l) => JSON.parse(l)).find((l) => l.reqId === id && l.level === 50)
    expect(logged?.err?.message).toContain('hunter2')
  })

  it('typed errors keep their status, details and headers', async () => {
    const r = await call('GET', '/api/v1/probe/typed/x1')
    expect(r.status).toBe(429)
    expect(r.body).toEqual({ error: 'rate_limited', message: 'Slow down', details: { id: 'x1' } })
    expect(r.headers.get('retry-after')).toBe('7')
    expect(r.headers.get('x-api-version')).toBe('v1')
  })

  it('a body over the configured limit is 413', async () => {
    const r = await call('POST', '/api/v1/probe/echo', { body: { name: 'x'.repeat(4096) } })
    expect(r.status).toBe(413)
    expect(r.body.error).toBe('payload_too_large')
  })
})

describe('CORS', () => {
  it('allows a configured origin and exposes the version headers', async () => {
    const r = await call('GET', '/api/v1/probe/typed/1', { headers: { Origin: 'https://app.example' } })
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(r.headers.get('access-control-expose-headers')).toContain('X-Request-ID')
  })

  it('answers a preflight from a configured origin', async () => {
    const r = await call('OPTIONS', '/api/v1/probe/echo', {
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    })
    expect(r.status).toBe(204)
    expect(r.headers.get('access-control-allow-methods')).toContain('POST')
    expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization')
  })

  it('gives no grant to another origin', async () => {
    const r = await call('GET', '/api/v1/probe/typed/1', { headers: { Origin: 'https://evil.example' } })
    expect(r.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('route order', () => {
  // Three modules whose paths overlap: a record id, a static word under records, a field's options.
  function routerAnswering(paths: Record<string, string>) {
    const router = createRouter()
    for (const [path, answer] of Object.entries(paths)) {
      const route = defineRoute({
        method: 'get',
        path,
        operationId: `probe.${answer}`,
        summary: answer,
        permission: null,
        responses: { 200: { description: 'ok' } },
      })
      router.openapi(route, (c) => c.json({ answer }, 200))
    }
    return router
  }
  const byId = () =>
    routerAnswering({
      '/api/v1/things/{name}/records/{id}': 'record',
      '/api/v1/things/{name}/{part}/options': 'part-options',
    })
  const exchange = () =>
    routerAnswering({
      '/api/v1/things/{name}/records/export': 'export',
      '/api/v1/things/{name}/records/import-jobs/{jobId}': 'import-job',
    })
  const fields = () => routerAnswering({ '/api/v1/things/{name}/fields/options': 'field-options' })

  const orders = [
    ['declared', [exchange, fields, byId]],
    ['reversed', [byId, fields, exchange]],
    ['shuffled', [fields, byId, exchange]],
  ] as const

  it.each(orders)(
    'a static segment wins over a parameter whatever the routers are listed in (%s)',
    async (_, order) => {
      const app = createHttpApp({
        log: createLogger('silent'),
        version: '1',
        publicUrl: 'http://localhost',
        corsOrigins: [],
        maxBodyBytes: 1024,
        routers: order.map((make) => make()),
      })
      const answer = async (path: string) => ((await (await app.request(path)).json()) as { answer: string }).answer
      expect(await answer('/api/v1/things/t/records/export')).toBe('export')
      expect(await answer('/api/v1/things/t/records/r1')).toBe('record')
      expect(await answer('/api/v1/things/t/records/import-jobs/j1')).toBe('import-job')
      expect(await answer('/api/v1/things/t/fields/options')).toBe('field-options')
      expect(await answer('/api/v1/things/t/labels/options')).toBe('part-options')
      // Every route is still described, whatever its place.
      const described = Object.keys(
        ((await (await app.request('/api/openapi.json')).json()) as { paths: object }).paths,
      )
      expect(described).toEqual(
        expect.arrayContaining([
          '/api/v1/things/{name}/records/export',
          '/api/v1/things/{name}/records/{id}',
          '/api/v1/things/{name}/fields/options',
        ]),
      )
    },
  )
})
