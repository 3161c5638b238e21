import { brotliDecompressSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'

// The admin UI as a browser fetches it (decision 078): `/` sends it to /_/, every path under /_/ answers
// the one page with a strict policy, and the page's assets are content-hashed, cached for a year and
// compressed. The screens themselves are tested in Chromium (admin-ui-browser.test.ts).

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

const assetsOf = (html: string) => [...html.matchAll(/\/_\/assets\/([\w.-]+)/g)].map((m) => m[1]!)

describe('the admin UI at /_/', () => {
  it('/ redirects to /_/', async () => {
    const reply = await fetch(`${server.url}/`, { redirect: 'manual' })
    expect(reply.status).toBe(302)
    expect(reply.headers.get('location')).toBe('/_/')
  })

  it('every path under /_/ answers the page, with a policy that allows only its own scripts and styles', async () => {
    for (const path of ['/_/', '/_/collections/posts', '/_/flows/abc/runs']) {
      const reply = await server.request('GET', path)
      expect(reply.status, path).toBe(200)
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/)
      expect(reply.headers.get('cache-control')).toBe('no-cache')
      const policy = reply.headers.get('content-security-policy')!
      expect(policy).toContain("default-src 'none'")
      expect(policy).toContain("script-src 'self'")
      expect(policy).toContain("style-src 'self'")
      expect(policy).toContain("frame-ancestors 'none'")
      expect(policy).not.toMatch(/unsafe-inline|unsafe-eval/)
      expect(reply.text).toContain('<div id="app"></div>')
      // No inline script: the policy would refuse it.
      expect(reply.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    }
  })

  it('assets have content-hashed names, a year of caching, and compressed bodies', async () => {
    const page = await server.request('GET', '/_/')
    const names = assetsOf(page.text)
    expect(names.some((n) => /^app-\w+\.js$/.test(n))).toBe(true)
    expect(names.some((n) => /^app-\w+\.css$/.test(n))).toBe(true)
    for (const name of names) {
      const plain = await fetch(`${server.url}/_/assets/${name}`, { headers: { 'accept-encoding': 'identity' } })
      expect(plain.status).toBe(200)
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(plain.headers.get('content-type')).toMatch(name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/)
      const body = Buffer.from(await plain.arrayBuffer())
      const { request } = await import('node:http')
      const br = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        request(`${server.url}/_/assets/${name}`, { headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () =>
            resolve({ encoding: res.headers['content-encoding'] as string | undefined, body: Buffer.concat(chunks) }),
          )
        })
          .on('error', reject)
          .end()
      })
      expect(br.encoding).toBe('br')
      expect(brotliDecompressSync(br.body).equals(body)).toBe(true)
    }
  })

  it('first load stays under 300 KB of compressed JavaScript (the budget)', async () => {
    const page = await server.request('GET', '/_/')
    let total = 0
    for (const name of assetsOf(page.text).filter((n) => n.endsWith('.js'))) {
      const { request } = await import('node:http')
      total += await new Promise<number>((resolve, reject) => {
        request(`${server.url}/_/assets/${name}`, { headers: { 'accept-encoding': 'br' } }, (res) => {
          let length = 0
          res.on('data', (c: Buffer) => {
            length += c.length
          })
          res.on('end', () => resolve(length))
        })
          .on('error', reject)
          .end()
      })
    }
    console.log(`admin UI first load: ${(total / 1024).toFixed(1)} KB of JavaScript (brotli)`)
    expect(total).toBeGreaterThan(0)
    expect(total).toBeLessThan(300 * 1024)
  })

  it('an unknown asset is 404 in the envelope', async () => {
    const reply = await server.request('GET', '/_/assets/app-NOPE.js')
    expect(reply.status).toBe(404)
    expect(reply.body.error).toBe('not_found')
  })

  it('capabilities tell a fresh instance from one with an owner (the first-run screen)', async () => {
    const fresh = await server.request('GET', '/api/auth/capabilities')
    expect(fresh.body.firstRun).toBe(true)
    expect(fresh.body.magicLink).toBe(false)
    const owner = await server.request('POST', '/api/auth/sign-up/email', {
      body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
    })
    expect(owner.status).toBe(200)
    const after = await server.request('GET', '/api/auth/capabilities')
    expect(after.body.firstRun).toBe(false)
  })
})

describe('ADMIN_UI=false', () => {
  let apiOnly: TestServer
  beforeAll(async () => {
    apiOnly = await startServer({ ADMIN_UI: 'false' })
  })
  afterAll(async () => {
    await apiOnly?.stop()
  })

  it('serves no UI: / and /_/ are 404', async () => {
    expect((await apiOnly.request('GET', '/')).status).toBe(404)
    expect((await apiOnly.request('GET', '/_/')).status).toBe(404)
  })
})
