import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { runScenarios } from '../support/scenarios.js'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

const dbKind = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite'
const health = {
  status: 'ok',
  version: expect.stringMatching(/^\d+\.\d+\.\d+/),
  database: dbKind,
  storage: 'local',
  cache: process.env.TEST_REDIS_URL ? 'redis' : 'memory',
  email_capabilities: { arbitraryRecipients: false, channel: 'email_no_channel', deliveryReceipts: false },
}

describe('HTTP conventions', () => {
  runScenarios(
    () => server,
    [
      { name: 'health answers with capabilities', method: 'GET', path: '/health', status: 200, contains: health },
      {
        name: 'versioned health',
        method: 'GET',
        path: '/api/v1/system/health',
        status: 200,
        contains: health,
        responseHeaders: { deprecation: null, link: null },
      },
      {
        name: 'deprecated alias answers with successor headers',
        method: 'GET',
        path: '/api/system/health',
        status: 200,
        contains: health,
        responseHeaders: { deprecation: 'true', link: '</api/v1/system/health>; rel="successor-version"' },
      },
      {
        name: 'alias of the OpenAPI document',
        method: 'GET',
        path: '/api/system/openapi.json',
        status: 200,
        contains: { openapi: '3.1.0' },
        responseHeaders: { deprecation: 'true' },
      },
      {
        name: 'unknown route is 404 not_found in the envelope',
        method: 'GET',
        path: '/nope',
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'unknown versioned route',
        method: 'DELETE',
        path: '/api/v1/nope/1',
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'unknown alias route advertises no successor',
        method: 'GET',
        path: '/api/nope',
        status: 404,
        contains: { error: 'not_found', message: 'No route for GET /api/nope' },
        responseHeaders: { deprecation: null, link: null },
      },
      {
        name: 'auth paths have no versioned alias',
        method: 'GET',
        path: '/api/auth/nothing-here',
        status: 404,
        contains: { error: 'not_found' },
        responseHeaders: { deprecation: null },
      },
      {
        name: 'wrong method on a known path',
        method: 'POST',
        path: '/health',
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'a client request id is echoed',
        method: 'GET',
        path: '/health',
        headers: { 'X-Request-ID': 'client-abc.123' },
        status: 200,
        responseHeaders: { 'x-request-id': 'client-abc.123' },
      },
      {
        name: 'an unusable client request id is replaced',
        method: 'GET',
        path: '/health',
        headers: { 'X-Request-ID': 'has spaces and <tags>' },
        status: 200,
        responseHeaders: { 'x-request-id': /^[0-9a-f-]{36}$/ },
      },
      {
        name: 'a body over the limit is refused before routing',
        method: 'POST',
        path: '/api/v1/system/health',
        rawBody: 'x'.repeat(10 * 1024 * 1024 + 1),
        status: 413,
        contains: { error: 'payload_too_large' },
      },
      {
        name: 'no CORS headers when CORS_ORIGINS is empty',
        method: 'GET',
        path: '/health',
        headers: { Origin: 'https://app.example' },
        status: 200,
        responseHeaders: { 'access-control-allow-origin': null },
      },
    ],
  )

  it('a body over the limit sent without Content-Length (chunked) is refused with 413', async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(120)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ >= 12) controller.close()
        else controller.enqueue(chunk)
      },
    })
    const res = await fetch(`${server.url}/api/v1/system/health`, {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ error: 'payload_too_large' })
  })
})

describe('OpenAPI, reference page and LLM context', () => {
  it('lists every route with an operationId and its permission', async () => {
    const reply = await server.request('GET', '/api/openapi.json')
    expect(reply.status).toBe(200)
    const doc = reply.body
    expect(doc.openapi).toBe('3.1.0')
    const documented = new Set<string>()
    const operationIds = new Set<string>()
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        documented.add(`${method.toUpperCase()} ${path}`)
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][a-zA-Z]*\.[a-zA-Z]+$/)
        expect(operationIds.has(op.operationId), `duplicate ${op.operationId}`).toBe(false)
        operationIds.add(op.operationId)
        expect(op['x-permission'], `${method} ${path}`).toEqual(expect.any(String))
      }
    }
    // Every route the app actually serves is in the document, but the admin UI's pages (`/`, `/_/…`: a web
    // page and its assets, docs/admin-ui.md), which are not API operations.
    const served = server.app.http.routes
      .filter((r) => r.method !== 'ALL' && r.path !== '/*') // middleware, not routes
      .filter((r) => r.path !== '/' && r.path !== '/_' && !r.path.startsWith('/_/'))
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
    expect(served.length).toBeGreaterThan(5)
    for (const route of served) expect(documented, route).toContain(route)
    expect(doc.components.schemas.Health.properties.email_capabilities).toBeDefined()
  })

  it('serves the same document at the versioned path', async () => {
    const a = await server.request('GET', '/api/openapi.json')
    const b = await server.request('GET', '/api/v1/system/openapi.json')
    expect(b.status).toBe(200)
    expect(b.body).toEqual(a.body)
  })

  it('summarises every operation for AI tools in Markdown', async () => {
    const doc = (await server.request('GET', '/api/openapi.json')).body
    const reply = await server.request('GET', '/api/v1/system/llm-context')
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toMatch(/^text\/markdown/)
    expect(reply.text).toMatch(/^# Plinth API/)
    for (const item of Object.values<Record<string, any>>(doc.paths)) {
      for (const op of Object.values<any>(item)) expect(reply.text).toContain(`\`${op.operationId}\``)
    }
  })

  it('renders the reference page from local assets only', async () => {
    const page = await server.request('GET', '/api/docs')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThanOrEqual(3)
    for (const ref of refs) {
      expect(ref, 'no CDN').toMatch(/^\/api\/docs\/assets\//)
      const asset = await server.request('GET', ref)
      expect(asset.status, ref).toBe(200)
      expect(asset.text.length, ref).toBeGreaterThan(20)
    }
    const init = await server.request('GET', '/api/docs/assets/init.js')
    expect(init.text).toContain("url: '/api/openapi.json'")
    const bundle = await server.request('GET', '/api/docs/assets/swagger-ui-bundle.js')
    expect(bundle.text).toContain('SwaggerUIBundle')
  })

  it('refuses asset names outside the allowlist', async () => {
    const reply = await server.request('GET', '/api/docs/assets/..%2Fpackage.json')
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
  })
})

describe('logs', () => {
  it('writes one line per request with id, method, path, status and duration, and no secrets', async () => {
    const secret = 'sk-verysecretvalue1234567890'
    const reply = await server.request('GET', `/api/v1/system/health?token=${secret}`, {
      headers: { Authorization: `Bearer ${secret}`, Cookie: `session=${secret}` },
    })
    const id = reply.headers.get('x-request-id')!
    // The line is written when the server closes the response, which may trail the client's read.
    await expect.poll(() => server.logs.filter((l) => l.includes(id)).length).toBe(1)
    const lines = server.logs.filter((l) => l.includes(id)).map((l) => JSON.parse(l))
    expect(lines[0]).toMatchObject({
      reqId: id,
      method: 'GET',
      path: '/api/v1/system/health',
      status: 200,
      ms: expect.any(Number),
    })
    expect(server.logs.join('\n')).not.toContain(secret)
  })
})
