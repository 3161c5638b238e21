import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { roleId, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

// Two installs: `closed` keeps the default grants (sign-up closed), `open` gives public system/users:create.
let closed: TestServer
let firstSignUp: Reply
let open: TestServer
let openOwner: Account
// A fresh install on which the first sign-ups race (nobody signs up in beforeAll).
let fresh: TestServer
let counter = 0
const freshEmail = () => `person-${++counter}@example.com`

beforeAll(async () => {
  ;[closed, open, fresh] = await Promise.all([startServer(), startServer(), startServer()])
  // The very first sign-up of the install; the tests below assert what it answered.
  firstSignUp = await closed.request('POST', '/api/auth/sign-up/email', {
    body: { email: 'Founder@Example.com', password: 'founder password', name: 'Founder' },
  })
  openOwner = await signUpOwner(open)
  await setGrants(open, openOwner.token, 'public', [{ resource: 'system/users', action: 'create' }])
})
afterAll(async () => {
  await Promise.all([closed?.stop(), open?.stop(), fresh?.stop()])
})

const signUp = (server: TestServer, body: unknown) => server.request('POST', '/api/auth/sign-up/email', { body })

describe('the first sign-up', () => {
  it('becomes the super_admin although sign-up is closed, with exactly { token, user: { id, email, name, role } }', async () => {
    expect(firstSignUp.status, firstSignUp.text).toBe(200)
    expect(firstSignUp.body).toEqual({
      token: expect.any(String),
      user: { id: expect.any(String), email: 'founder@example.com', name: 'Founder', role: 'super_admin' },
    })
    expect(firstSignUp.headers.get('cache-control')).toBe('no-store')
    // Sign-up really was closed: the public role holds no grant at all.
    const publicId = await roleId(closed, firstSignUp.body.token, 'public')
    const grants = await closed.request('GET', `/api/v1/roles/${publicId}/grants`, { token: firstSignUp.body.token })
    expect(grants.status).toBe(200)
    expect(grants.body.data).toEqual([])
  })

  it('answers with a working session token of the owner', async () => {
    const session = await closed.request('GET', '/api/auth/get-session', { token: firstSignUp.body.token })
    expect(session.status, session.text).toBe(200)
    expect(session.body.user).toMatchObject({
      id: firstSignUp.body.user.id,
      email: 'founder@example.com',
      role: 'super_admin',
    })
  })

  it('stores the password: the owner signs in with it, the email in any case', async () => {
    const reply = await closed.request('POST', '/api/auth/sign-in/email', {
      body: { email: 'FOUNDER@example.COM', password: 'founder password' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.user).toEqual({
      id: firstSignUp.body.user.id,
      email: 'founder@example.com',
      name: 'Founder',
      role: 'super_admin',
    })
  })

  it('lets exactly one of several first sign-ups racing on a fresh install become the owner', async () => {
    const replies = await Promise.all(
      [1, 2, 3].map((n) =>
        signUp(fresh, { email: `first${n}@example.com`, password: 'a good password', name: `First ${n}` }),
      ),
    )
    expect(replies.map((r) => r.status).sort()).toEqual([200, 403, 403])
    const winner = replies.find((r) => r.status === 200)!
    expect(winner.body.user.role).toBe('super_admin')
    expect(replies.filter((r) => r.status === 403).every((r) => r.body.error === 'signup_forbidden')).toBe(true)
    const users = await fresh.request('GET', '/api/v1/users', { token: winner.body.token })
    expect(users.body.total).toBe(1)
  })
})

describe('sign-up while closed', () => {
  it('refuses a later sign-up with 403 signup_forbidden and creates no account', async () => {
    const email = freshEmail()
    const reply = await signUp(closed, { email, password: 'a good password', name: 'Late' })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body).toEqual({ error: 'signup_forbidden', message: expect.any(String), details: expect.any(Object) })
    expect(reply.text).not.toContain('"token"')
    const signIn = await closed.request('POST', '/api/auth/sign-in/email', {
      body: { email, password: 'a good password' },
    })
    expect(signIn.status).toBe(401)
    const users = await closed.request('GET', '/api/v1/users', { token: firstSignUp.body.token })
    expect(users.body.data.map((u: { email: string }) => u.email)).not.toContain(email)
  })
})

describe('sign-up while open (public holds system/users:create)', () => {
  it('lets anyone join the default project as a viewer', async () => {
    const email = freshEmail()
    const reply = await signUp(open, { email, password: 'a good password', name: 'Newcomer' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      token: expect.any(String),
      user: { id: expect.any(String), email, name: 'Newcomer', role: 'viewer' },
    })
    const session = await open.request('GET', '/api/auth/get-session', { token: reply.body.token })
    const ownerSession = await open.request('GET', '/api/auth/get-session', { token: openOwner.token })
    expect(session.body.user).toEqual({
      id: reply.body.user.id,
      email,
      name: 'Newcomer',
      role: 'viewer',
      projectId: ownerSession.body.user.projectId,
      username: null,
      totpEnabled: false,
    })
    const listed = await open.request('GET', `/api/v1/users/${reply.body.user.id}`, { token: openOwner.token })
    expect(listed.body.data).toMatchObject({ email, name: 'Newcomer', role: 'viewer', banned: false })
    expect(listed.text).not.toContain('a good password')
  })

  it('refuses an email that is taken, in any letter case, with 409 already_exists', async () => {
    const email = freshEmail()
    expect((await signUp(open, { email, password: 'a good password', name: 'First' })).status).toBe(200)
    const again = await signUp(open, { email: email.toUpperCase(), password: 'another password', name: 'Second' })
    expect(again.status, again.text).toBe(409)
    expect(again.body.error).toBe('already_exists')
    // The first account keeps its password.
    const signIn = await open.request('POST', '/api/auth/sign-in/email', {
      body: { email, password: 'another password' },
    })
    expect(signIn.status).toBe(401)
  })

  // `users.email` has no unique index (shared contact emails are allowed for accounts with usernames), so
  // the check must run inside the locked transaction: otherwise racing sign-ups all succeed.
  it('refuses all but one of several sign-ups racing with the same email', async () => {
    for (let round = 0; round < 5; round++) {
      const email = freshEmail()
      const replies = await Promise.all(
        [1, 2, 3, 4].map((n) => signUp(open, { email, password: 'a good password', name: `Racer ${n}` })),
      )
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409])
      expect(
        (await open.request('POST', '/api/auth/sign-in/email', { body: { email, password: 'a good password' } }))
          .status,
      ).toBe(200)
    }
  })

  it("refuses the owner's email too", async () => {
    const reply = await signUp(open, {
      email: openOwner.email.toUpperCase(),
      password: 'a good password',
      name: 'Impostor',
    })
    expect(reply.status).toBe(409)
    expect(reply.body.error).toBe('already_exists')
  })

  it('closes again as soon as the grant is taken away', async () => {
    try {
      await setGrants(open, openOwner.token, 'public', [])
      const reply = await signUp(open, { email: freshEmail(), password: 'a good password', name: 'Too late' })
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('signup_forbidden')
    } finally {
      await setGrants(open, openOwner.token, 'public', [{ resource: 'system/users', action: 'create' }])
    }
    expect((await signUp(open, { email: freshEmail(), password: 'a good password', name: 'Welcome' })).status).toBe(200)
  })
})

describe('sign-up input', () => {
  const good = { email: 'valid@example.com', password: 'a good password', name: 'Valid' }
  // On the open install, so a 400 cannot be mistaken for the closed door.
  runScenarios(
    () => open,
    [
      {
        name: 'missing email',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { password: good.password, name: good.name },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'malformed email',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { ...good, email: 'not-an-email' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'email without a domain',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { ...good, email: 'someone@' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'email of a wrong type',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { ...good, email: 42 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'missing password',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { email: good.email, name: good.name },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'password of 7 characters',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { ...good, password: '1234567' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'password over 256 characters',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { ...good, password: 'p'.repeat(257) },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'missing name',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { email: good.email, password: good.password },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'empty name',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { ...good, name: '' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'blank name',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        body: { ...good, name: '   ' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no body',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a body that is not JSON',
        method: 'POST',
        path: '/api/auth/sign-up/email',
        rawBody: '{"email":',
        headers: { 'content-type': 'application/json' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )

  it('creates nothing for a refused body', async () => {
    const email = freshEmail()
    const refused = await signUp(open, { email, password: good.password, name: '' })
    expect(refused.status).toBe(400)
    const signIn = await open.request('POST', '/api/auth/sign-in/email', { body: { email, password: good.password } })
    expect(signIn.status).toBe(401)
    expect((await signUp(open, { email, password: good.password, name: 'Now named' })).status).toBe(200)
  })

  it('accepts a password of exactly 8 characters', async () => {
    const reply = await signUp(open, { email: freshEmail(), password: '12345678', name: 'Short but fine' })
    expect(reply.status, reply.text).toBe(200)
  })
})
