import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'

// Cookie sessions for the admin UI (decision 078): the attacks each guard is there for. A page elsewhere
// cannot use the cookie (SameSite=Strict, and the Origin check when a browser sends it anyway), cannot
// make an unsafe request without the CSRF token it cannot read, and script on our own page cannot read the
// session token (HttpOnly; it is not in the body either).

let server: TestServer
const owner = { email: 'owner@example.com', password: 'owner password', name: 'Owner' }

interface Jar {
  session: string
  csrf: string
}

/** The cookies a Set-Cookie list carries, by name, with their attributes. */
function setCookies(reply: Reply): Map<string, { value: string; attributes: string[] }> {
  const cookies = new Map<string, { value: string; attributes: string[] }>()
  for (const line of reply.headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(';').map((p) => p.trim())
    const at = pair!.indexOf('=')
    cookies.set(pair!.slice(0, at), { value: pair!.slice(at + 1), attributes: attributes.map((a) => a.toLowerCase()) })
  }
  return cookies
}

async function signIn(): Promise<Jar> {
  const reply = await server.request('POST', '/api/auth/sign-in/email', {
    body: { email: owner.email, password: owner.password },
    headers: { 'x-plinth-session': 'cookie' },
  })
  expect(reply.status, reply.text).toBe(200)
  const cookies = setCookies(reply)
  return { session: cookies.get('plinth_session')!.value, csrf: cookies.get('plinth_csrf')!.value }
}

const withCookie = (jar: Jar, headers: Record<string, string> = {}) => ({
  cookie: `plinth_session=${jar.session}; plinth_csrf=${jar.csrf}`,
  ...headers,
})

const createCollection = (name: string, headers: Record<string, string>) =>
  server.request('POST', '/api/v1/collections', {
    headers,
    body: { name, fields: [{ name: 'title', type: 'text', required: false }] },
  })

async function collectionNames(jar: Jar): Promise<string[]> {
  const listed = await server.request('GET', '/api/v1/collections', { headers: withCookie(jar) })
  expect(listed.status, listed.text).toBe(200)
  return (listed.body.data as { name: string }[]).map((c) => c.name)
}

beforeAll(async () => {
  server = await startServer()
  const signUp = await server.request('POST', '/api/auth/sign-up/email', { body: owner })
  expect(signUp.status, signUp.text).toBe(200)
})
afterAll(async () => {
  await server?.stop()
})

describe('cookie sessions (X-Plinth-Session: cookie)', () => {
  it('a sign-in in cookie mode sets an HttpOnly, SameSite=Strict session cookie and leaves the token out of the body', async () => {
    const reply = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: owner.email, password: owner.password },
      headers: { 'x-plinth-session': 'cookie' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.token).toBeUndefined()
    expect(reply.text).not.toMatch(/"token"/)
    expect(reply.body.user.email).toBe(owner.email)
    const cookies = setCookies(reply)
    const session = cookies.get('plinth_session')!
    expect(session.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']))
    expect(session.attributes.some((a) => a.startsWith('max-age='))).toBe(true)
    expect(reply.text).not.toContain(session.value)
    const csrf = cookies.get('plinth_csrf')!
    // The page reads the CSRF token; never the session.
    expect(csrf.attributes).not.toContain('httponly')
    expect(csrf.attributes).toContain('samesite=strict')
    expect(csrf.value).not.toBe(session.value)
  })

  it('without the header a sign-in answers the token as before and sets no cookie', async () => {
    const reply = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: owner.email, password: owner.password },
    })
    expect(typeof reply.body.token).toBe('string')
    expect(reply.headers.getSetCookie()).toEqual([])
  })

  it('the cookie is a session: reads work with it alone', async () => {
    const jar = await signIn()
    const me = await server.request('GET', '/api/auth/get-session', { headers: withCookie(jar) })
    expect(me.status, me.text).toBe(200)
    expect(me.body.user.email).toBe(owner.email)
  })

  it('an unsafe request without the CSRF token is 403 and writes nothing (a form posted from another site)', async () => {
    const jar = await signIn()
    const forged = await createCollection('forged', { cookie: `plinth_session=${jar.session}` })
    expect(forged.status, forged.text).toBe(403)
    expect(forged.body.error).toBe('forbidden')
    expect(await collectionNames(jar)).not.toContain('forged')
  })

  it('a wrong CSRF token, or the token of another session, is 403', async () => {
    const jar = await signIn()
    const other = await signIn()
    for (const token of ['0'.repeat(43), other.csrf, jar.session]) {
      const reply = await createCollection('guessed', withCookie(jar, { 'x-csrf-token': token }))
      expect(reply.status, token).toBe(403)
    }
    expect(await collectionNames(jar)).not.toContain('guessed')
  })

  it('with its CSRF token the cookie session writes', async () => {
    const jar = await signIn()
    const reply = await createCollection('by_cookie', withCookie(jar, { 'x-csrf-token': jar.csrf }))
    expect(reply.status, reply.text).toBe(201)
  })

  it('a request from another site is refused even with the CSRF token, reads included', async () => {
    const jar = await signIn()
    const evil = { origin: 'https://evil.example', 'x-csrf-token': jar.csrf }
    const read = await server.request('GET', '/api/v1/collections', { headers: withCookie(jar, evil) })
    expect(read.status).toBe(403)
    const write = await createCollection('from_evil', withCookie(jar, evil))
    expect(write.status).toBe(403)
    const crossSite = await server.request('GET', '/api/v1/collections', {
      headers: withCookie(jar, { 'sec-fetch-site': 'cross-site' }),
    })
    expect(crossSite.status).toBe(403)
    const nullOrigin = await server.request('GET', '/api/v1/collections', {
      headers: withCookie(jar, { origin: 'null' }),
    })
    expect(nullOrigin.status).toBe(403)
    expect(await collectionNames(jar)).not.toContain('from_evil')
  })

  it('a request from its own origin is accepted', async () => {
    const jar = await signIn()
    const origin = new URL(server.url).origin
    const reply = await createCollection('same_origin', withCookie(jar, { origin, 'x-csrf-token': jar.csrf }))
    expect(reply.status, reply.text).toBe(201)
  })

  it('an API key in the cookie is not accepted (keys are Bearer only)', async () => {
    const jar = await signIn()
    const key = await server.request('POST', '/api/auth/api-keys', {
      headers: withCookie(jar, { 'x-csrf-token': jar.csrf }),
      body: { label: 'k', capabilities: ['schema/*:read'] },
    })
    expect(key.status, key.text).toBe(201)
    const secret: string = key.body.raw
    expect(secret).toMatch(/^sk-/)
    const reply = await server.request('GET', '/api/v1/collections', {
      headers: { cookie: `plinth_session=${secret}` },
    })
    expect(reply.status).toBe(401)
  })

  it('a Bearer token wins over a cookie and needs no CSRF token', async () => {
    const jar = await signIn()
    const plain = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: owner.email, password: owner.password },
    })
    const reply = await server.request('POST', '/api/v1/collections', {
      token: plain.body.token,
      headers: { cookie: `plinth_session=${jar.session}` },
      body: { name: 'by_bearer', fields: [] },
    })
    expect(reply.status, reply.text).toBe(201)
  })

  it('sign-out ends the session and clears both cookies', async () => {
    const jar = await signIn()
    const out = await server.request('POST', '/api/auth/sign-out', {
      headers: withCookie(jar, { 'x-csrf-token': jar.csrf }),
    })
    expect(out.status, out.text).toBe(200)
    const cleared = setCookies(out)
    for (const name of ['plinth_session', 'plinth_csrf']) {
      expect(cleared.get(name)?.value).toBe('')
      expect(cleared.get(name)?.attributes).toContain('max-age=0')
    }
    const after = await server.request('GET', '/api/auth/get-session', { headers: withCookie(jar) })
    expect(after.status).toBe(401)
  })

  it('sign-out by cookie needs the CSRF token (a forged sign-out is refused)', async () => {
    const jar = await signIn()
    const forged = await server.request('POST', '/api/auth/sign-out', {
      headers: { cookie: `plinth_session=${jar.session}` },
    })
    expect(forged.status).toBe(403)
    const still = await server.request('GET', '/api/auth/get-session', { headers: withCookie(jar) })
    expect(still.status).toBe(200)
  })
})
