import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { runScenarios } from '../support/scenarios.js'

// Every response carries the security headers (docs/http.md, decision 014): JSON answers, errors, 404s,
// the answers of the HTTP parser and of refused upgrades. The reference page has a policy of its own.

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

const strictPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
const common = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}
const strict = { ...common, 'content-security-policy': strictPolicy }

describe('security headers on every response', () => {
  runScenarios(
    () => server,
    [
      { name: 'a JSON answer', method: 'GET', path: '/health', status: 200, responseHeaders: strict },
      { name: 'the OpenAPI document', method: 'GET', path: '/api/openapi.json', status: 200, responseHeaders: strict },
      {
        name: 'an error (400 from validation)',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        body: { email: 'not an email' },
        status: 400,
        contains: { error: 'invalid_request' },
        responseHeaders: strict,
      },
      {
        name: 'an error (401 from the guard)',
        method: 'GET',
        path: '/api/auth/get-session',
        status: 401,
        contains: { error: 'unauthorized' },
        responseHeaders: strict,
      },
      {
        name: 'a 404',
        method: 'GET',
        path: '/nope',
        status: 404,
        contains: { error: 'not_found' },
        responseHeaders: strict,
      },
      { name: 'a 404 on a deprecated alias', method: 'GET', path: '/api/nope', status: 404, responseHeaders: strict },
      {
        name: 'a 413 from the body limit',
        method: 'POST',
        path: '/api/v1/system/health',
        rawBody: 'x'.repeat(10 * 1024 * 1024 + 1),
        status: 413,
        responseHeaders: strict,
      },
      {
        name: 'a static asset of the reference page',
        method: 'GET',
        path: '/api/docs/assets/init.js',
        status: 200,
        responseHeaders: strict,
      },
      {
        name: 'the reference page: its own policy, scripts and styles from this origin only, never framed',
        method: 'GET',
        path: '/api/docs',
        status: 200,
        responseHeaders: {
          ...common,
          'content-security-policy':
            /^default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self' http:\/\/127\.0\.0\.1:\d+; frame-ancestors 'none'; base-uri 'none'; form-action 'none'$/,
        },
      },
    ],
  )

  it('the reference page has no inline script, and does not keep tokens (persistAuthorization off)', async () => {
    const page = await server.request('GET', '/api/docs')
    for (const tag of page.text.match(/<script[^>]*>[^<]*<\/script>/g) ?? [])
      expect(tag).toMatch(/^<script src="[^"]+"><\/script>$/)
    const init = await server.request('GET', '/api/docs/assets/init.js')
    expect(init.text).toContain('persistAuthorization: false')
  })

  it('a stored file served by the local driver: active types sandboxed, displayed types with no policy, the rest as everywhere', async () => {
    const storage = server.app.storage
    expect(storage.kind).toBe('local')
    await storage.put('tests/page.html', Buffer.from('<script>alert(1)</script>'), { contentType: 'text/html' })
    await storage.put('tests/pixel.png', Buffer.from('png'), { contentType: 'image/png' })
    const html = await fetch(await storage.presignGet('tests/page.html', { expiresIn: 60 }))
    expect(html.status).toBe(200)
    expect(Object.fromEntries(html.headers)).toMatchObject({
      ...common,
      'content-security-policy': "default-src 'none'; sandbox",
    })
    const png = await fetch(await storage.presignGet('tests/pixel.png', { expiresIn: 60 }))
    expect(png.status).toBe(200)
    expect(Object.fromEntries(png.headers)).toMatchObject(common)
    // Chrome's own page for an image is styled inline; a policy would block that (docs/http.md).
    expect(png.headers.get('content-security-policy')).toBeNull()
  })

  /** Writes raw bytes on a fresh connection and returns the head of what the server sends back. */
  function rawExchange(request: string): Promise<string> {
    const { hostname, port } = new URL(server.url)
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(request))
      const chunks: Buffer[] = []
      socket.on('data', (chunk: Buffer) => chunks.push(chunk))
      socket.on('error', reject)
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8').split('\r\n\r\n')[0]!))
    })
  }

  function headersOf(head: string): Record<string, string> {
    const out: Record<string, string> = {}
    for (const line of head.split('\r\n').slice(1)) {
      const colon = line.indexOf(':')
      out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    return out
  }

  it('a request the HTTP parser refuses (400 before any route)', async () => {
    const head = await rawExchange('GET /health HTTP/1.1\r\nno colon\r\n\r\n')
    expect(head).toMatch(/^HTTP\/1\.1 400 /)
    expect(headersOf(head)).toMatchObject(strict)
  })

  it('a refused WebSocket upgrade (answered on the raw socket)', async () => {
    const head = await rawExchange(
      'GET /api/v1/nope HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    )
    expect(head).toMatch(/^HTTP\/1\.1 404 /)
    expect(headersOf(head)).toMatchObject(strict)
  })
})
