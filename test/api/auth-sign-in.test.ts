import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

// `server` never enables username sign-in (except inside the one test that toggles it and restores it);
// `named` has it enabled from the start; `social` has GitHub configured.
let server: TestServer
let owner: Account
let named: TestServer
let namedOwner: Account
let social: TestServer
let counter = 0
const unique = (prefix: string) => `${prefix}${++counter}x${Date.now().toString(36)}`

beforeAll(async () => {
  ;[server, named, social] = await Promise.all([
    startServer(),
    startServer(),
    startServer({ GITHUB_CLIENT_ID: 'test-client', GITHUB_CLIENT_SECRET: 'test-secret' }),
  ])
  ;[owner, namedOwner] = await Promise.all([signUpOwner(server), signUpOwner(named)])
  const enabled = await named.request('PATCH', '/api/v1/settings', {
    token: namedOwner.token,
    body: { 'auth.usernameEnabled': true },
  })
  expect(enabled.status, enabled.text).toBe(200)
})
afterAll(async () => {
  await Promise.all([server?.stop(), named?.stop(), social?.stop()])
})

const signInEmail = (s: TestServer, body: unknown) => s.request('POST', '/api/auth/sign-in/email', { body })
const signInUsername = (s: TestServer, body: unknown) => s.request('POST', '/api/auth/sign-in/username', { body })
const getSession = (s: TestServer, token?: string) => s.request('GET', '/api/auth/get-session', { token })
const patchUser = (s: TestServer, adminToken: string, id: string, body: unknown) =>
  s.request('PATCH', `/api/v1/users/${id}`, { token: adminToken, body })

/** An account with a username, created by the owner of `s` (not signed in). */
async function namedAccount(s: TestServer, adminToken: string, role = 'viewer') {
  const username = unique('user')
  const email = `${username}@example.com`
  const password = 'a good password'
  const created = await s.request('POST', '/api/v1/users', {
    token: adminToken,
    body: { email, username, password, name: 'Named', role },
  })
  expect(created.status, created.text).toBe(201)
  return { id: created.body.data.id as string, username, email, password }
}

describe('POST /api/auth/sign-in/email', () => {
  it('answers exactly { token, user: { id, email, name, role } } with a working session token', async () => {
    const account = await createAccount(server, owner.token, { role: 'editor', name: 'Edith' })
    const reply = await signInEmail(server, { email: account.email, password: account.password })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      token: expect.any(String),
      user: { id: account.id, email: account.email, name: 'Edith', role: 'editor' },
    })
    expect(reply.headers.get('cache-control')).toBe('no-store')
    expect(reply.text).not.toContain(account.password)
    // Each sign-in opens a new session.
    expect(reply.body.token).not.toBe(account.token)
    expect((await getSession(server, reply.body.token)).body.user.id).toBe(account.id)
  })

  it('finds the account whatever the letter case of the email', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await signInEmail(server, { email: account.email.toUpperCase(), password: account.password })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.user.id).toBe(account.id)
  })

  it('gives one generic 401 for an unknown email and for a wrong password', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const unknown = await signInEmail(server, { email: 'nobody@example.com', password: account.password })
    const wrong = await signInEmail(server, { email: account.email, password: 'not the password' })
    const empty = await signInEmail(server, { email: account.email, password: '' })
    for (const reply of [unknown, wrong, empty]) {
      expect(reply.status, reply.text).toBe(401)
      expect(reply.body).toEqual({
        error: 'unauthorized',
        message: unknown.body.message,
        details: unknown.body.details,
      })
      expect(reply.text).not.toContain('"token"')
    }
    expect(unknown.body.message).not.toMatch(/email|exist|found/i)
  })

  it('does not let the password of another account in', async () => {
    const a = await createAccount(server, owner.token, { role: 'viewer', password: 'password of a' })
    const b = await createAccount(server, owner.token, { role: 'viewer', password: 'password of b' })
    expect((await signInEmail(server, { email: a.email, password: b.password })).status).toBe(401)
  })

  it('refuses a banned account with 403 account_banned, and lets it in again once unbanned', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await patchUser(server, owner.token, account.id, { banned: true })).status).toBe(200)
    const banned = await signInEmail(server, { email: account.email, password: account.password })
    expect(banned.status, banned.text).toBe(403)
    expect(banned.body.error).toBe('account_banned')
    // A wrong password still gets the generic answer: the ban is only told to someone who knows the password.
    const wrong = await signInEmail(server, { email: account.email, password: 'not the password' })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe('unauthorized')
    expect((await patchUser(server, owner.token, account.id, { banned: false })).status).toBe(200)
    expect((await signInEmail(server, { email: account.email, password: account.password })).status).toBe(200)
  })

  it('does not sign in by a contact email shared by several accounts (they use their usernames)', async () => {
    const shared = `${unique('shared')}@example.com`
    for (const username of [unique('first'), unique('second')]) {
      const created = await server.request('POST', '/api/v1/users', {
        token: owner.token,
        body: { email: shared, username, password: 'shared password', name: username, role: 'viewer' },
      })
      expect(created.status, created.text).toBe(201)
    }
    const reply = await signInEmail(server, { email: shared, password: 'shared password' })
    expect(reply.status).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
  })

  runScenarios(
    () => server,
    [
      {
        name: 'missing email',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        body: { password: 'owner password' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'missing password',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        body: { email: 'owner@example.com' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'password of a wrong type',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        body: { email: 'owner@example.com', password: 12345678 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a code that is not 6 digits',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        body: { email: 'owner@example.com', password: 'owner password', code: '12ab56' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no body',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'the owner signs in',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        body: { email: 'owner@example.com', password: 'owner password' },
        status: 200,
        contains: { user: { email: 'owner@example.com', name: 'Owner', role: 'super_admin' } },
        notContains: ['owner password', 'password_hash'],
      },
    ],
  )
})

describe('POST /api/auth/sign-in/username', () => {
  it('is 404 not_found while auth.usernameEnabled is false, and follows the setting both ways', async () => {
    const account = await namedAccount(server, owner.token)
    const body = { username: account.username, password: account.password }
    const off = await signInUsername(server, body)
    expect(off.status, off.text).toBe(404)
    expect(off.body.error).toBe('not_found')
    expect(off.text).not.toContain('"token"')
    try {
      const on = await server.request('PATCH', '/api/v1/settings', {
        token: owner.token,
        body: { 'auth.usernameEnabled': true },
      })
      expect(on.body.data['auth.usernameEnabled']).toBe(true)
      expect((await server.request('GET', '/api/auth/capabilities')).body.usernameEnabled).toBe(true)
      const reply = await signInUsername(server, body)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.user.id).toBe(account.id)
    } finally {
      await server.request('PATCH', '/api/v1/settings', { token: owner.token, body: { 'auth.usernameEnabled': false } })
    }
    expect((await signInUsername(server, body)).status).toBe(404)
    expect((await server.request('GET', '/api/auth/capabilities')).body.usernameEnabled).toBe(false)
  })

  it('signs in an account created with a username, in the shape of email sign-in', async () => {
    const account = await namedAccount(named, namedOwner.token, 'editor')
    const reply = await signInUsername(named, { username: account.username, password: account.password })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      token: expect.any(String),
      user: { id: account.id, email: account.email, name: 'Named', role: 'editor' },
    })
    expect(reply.headers.get('cache-control')).toBe('no-store')
    const session = await getSession(named, reply.body.token)
    expect(session.status).toBe(200)
    expect(session.body.user).toMatchObject({ id: account.id, role: 'editor' })
  })

  it('finds the username whatever its letter case', async () => {
    const account = await namedAccount(named, namedOwner.token)
    const reply = await signInUsername(named, { username: account.username.toUpperCase(), password: account.password })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.user.id).toBe(account.id)
  })

  it('gives the same generic 401 as email sign-in for an unknown username and for a wrong password', async () => {
    const account = await namedAccount(named, namedOwner.token)
    const unknown = await signInUsername(named, { username: 'nobody-here', password: account.password })
    const wrong = await signInUsername(named, { username: account.username, password: 'not the password' })
    const byEmail = await signInEmail(named, { email: 'nobody@example.com', password: 'whatever' })
    for (const reply of [unknown, wrong]) {
      expect(reply.status, reply.text).toBe(401)
      expect(reply.body).toEqual(byEmail.body)
    }
  })

  it('refuses a banned account with 403 account_banned', async () => {
    const account = await namedAccount(named, namedOwner.token)
    expect((await patchUser(named, namedOwner.token, account.id, { banned: true })).status).toBe(200)
    const reply = await signInUsername(named, { username: account.username, password: account.password })
    expect(reply.status).toBe(403)
    expect(reply.body.error).toBe('account_banned')
  })

  it('signs in each account that shares a contact email by its own username', async () => {
    const shared = `${unique('family')}@example.com`
    const accounts = []
    for (const [username, password] of [
      [unique('parent'), 'parent password'],
      [unique('child'), 'child password'],
    ] as const) {
      const created = await named.request('POST', '/api/v1/users', {
        token: namedOwner.token,
        body: { email: shared, username, password, name: username, role: 'viewer' },
      })
      expect(created.status, created.text).toBe(201)
      accounts.push({ id: created.body.data.id as string, username, password })
    }
    for (const account of accounts) {
      const reply = await signInUsername(named, { username: account.username, password: account.password })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.user).toMatchObject({ id: account.id, email: shared })
    }
    expect(
      (await signInUsername(named, { username: accounts[0]!.username, password: accounts[1]!.password })).status,
    ).toBe(401)
  })

  runScenarios(
    () => named,
    [
      {
        name: 'missing username',
        method: 'POST',
        path: '/api/auth/sign-in/username',
        body: { password: 'a good password' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'missing password',
        method: 'POST',
        path: '/api/auth/sign-in/username',
        body: { username: 'someone' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})

describe('POST /api/auth/is-username-available', () => {
  const available = (s: TestServer, username: unknown) =>
    s.request('POST', '/api/auth/is-username-available', { body: { username } })

  it('is true for a free name and false for a taken one, in any letter case', async () => {
    const free = unique('free')
    expect((await available(server, free)).body).toEqual({ available: true })
    const account = await namedAccount(server, owner.token)
    const taken = await available(server, account.username)
    expect(taken.status).toBe(200)
    expect(taken.body).toEqual({ available: false })
    expect((await available(server, account.username.toUpperCase())).body).toEqual({ available: false })
  })

  it('answers while username sign-in is off', async () => {
    const settings = await server.request('GET', '/api/v1/settings', { token: owner.token })
    expect(settings.body.data['auth.usernameEnabled']).toBe(false)
    expect((await available(server, unique('any'))).status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'a name too short to register is not available',
        method: 'POST',
        path: '/api/auth/is-username-available',
        body: { username: 'ab' },
        status: 200,
        contains: { available: false },
      },
      {
        name: 'a name with spaces is not available',
        method: 'POST',
        path: '/api/auth/is-username-available',
        body: { username: 'has space' },
        status: 200,
        contains: { available: false },
      },
      {
        name: 'an email is not a username',
        method: 'POST',
        path: '/api/auth/is-username-available',
        body: { username: 'someone@example.com' },
        status: 200,
        contains: { available: false },
      },
      {
        name: 'missing username',
        method: 'POST',
        path: '/api/auth/is-username-available',
        body: {},
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'username of a wrong type',
        method: 'POST',
        path: '/api/auth/is-username-available',
        body: { username: 42 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})

describe('GET /api/auth/capabilities', () => {
  it('answers anyone with exactly usernameEnabled, requireEmail, socialProviders, magicLink and firstRun', async () => {
    const reply = await server.request('GET', '/api/auth/capabilities')
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      usernameEnabled: false,
      requireEmail: true,
      socialProviders: { github: false, google: false },
      magicLink: false,
      firstRun: false,
    })
  })

  it('follows the settings of the install', async () => {
    expect((await named.request('GET', '/api/auth/capabilities')).body.usernameEnabled).toBe(true)
    try {
      const patched = await named.request('PATCH', '/api/v1/settings', {
        token: namedOwner.token,
        body: { 'auth.requireEmail': false },
      })
      expect(patched.status, patched.text).toBe(200)
      expect((await named.request('GET', '/api/auth/capabilities')).body).toMatchObject({
        usernameEnabled: true,
        requireEmail: false,
      })
    } finally {
      await named.request('PATCH', '/api/v1/settings', { token: namedOwner.token, body: { 'auth.requireEmail': true } })
    }
  })

  it('reports a social provider once its client id and secret are configured', async () => {
    const reply = await social.request('GET', '/api/auth/capabilities')
    expect(reply.status).toBe(200)
    expect(reply.body.socialProviders).toEqual({ github: true, google: false })
    expect(reply.text).not.toContain('test-secret')
  })
})

describe('GET /api/auth/get-session', () => {
  it('answers exactly { user: { id, email, name, role, projectId, username, totpEnabled }, session: { id, expiresAt } }, expiring in 7 days', async () => {
    const account = await createAccount(server, owner.token, { role: 'editor', name: 'Sessioned' })
    const reply = await getSession(server, account.token)
    expect(reply.status, reply.text).toBe(200)
    const profile = await server.request('GET', `/api/v1/users/${account.id}`, { token: owner.token })
    expect(reply.body).toEqual({
      user: {
        id: account.id,
        email: account.email,
        name: 'Sessioned',
        role: 'editor',
        projectId: profile.body.data.projectId,
        username: null,
        totpEnabled: false,
      },
      session: { id: expect.any(String), expiresAt: expect.any(Number) },
    })
    const sevenDays = 7 * 24 * 3600
    const now = Math.floor(Date.now() / 1000)
    expect(Number.isInteger(reply.body.session.expiresAt)).toBe(true)
    // Unix seconds, not milliseconds; a generous margin for a slow run.
    expect(reply.body.session.expiresAt).toBeGreaterThan(now + sevenDays - 600)
    expect(reply.body.session.expiresAt).toBeLessThanOrEqual(now + sevenDays + 5)
    expect(reply.body.session.id).not.toBe(account.token)
  })

  it('names a different session for each sign-in', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const again = await signInEmail(server, { email: account.email, password: account.password })
    const a = await getSession(server, account.token)
    const b = await getSession(server, again.body.token)
    expect(a.body.session.id).not.toBe(b.body.session.id)
    expect(a.body.user).toEqual(b.body.user)
  })

  it('accepts an sk- API key nowhere here: 401', async () => {
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'session probe', capabilities: ['system/users:read'] },
    })
    expect(key.status, key.text).toBe(201)
    expect(key.body.raw).toMatch(/^sk-/)
    const reply = await getSession(server, key.body.raw)
    expect(reply.status, reply.text).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
    // The key itself is valid elsewhere.
    expect((await server.request('GET', '/api/v1/users', { token: key.body.raw })).status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'no credential',
        method: 'GET',
        path: '/api/auth/get-session',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'an unknown token',
        method: 'GET',
        path: '/api/auth/get-session',
        as: 'not-a-real-session-token',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'an unknown sk- key',
        method: 'GET',
        path: '/api/auth/get-session',
        as: 'sk-not-a-real-key',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a malformed Authorization header',
        method: 'GET',
        path: '/api/auth/get-session',
        headers: { authorization: 'Basic b3duZXI6cGFzcw==' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a Bearer header without a token',
        method: 'GET',
        path: '/api/auth/get-session',
        headers: { authorization: 'Bearer ' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )
})

describe('POST /api/auth/sign-out', () => {
  it('answers { success: true } and the token is 401 on the very next request', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await getSession(server, account.token)).status).toBe(200)
    const reply = await server.request('POST', '/api/auth/sign-out', { token: account.token })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true })
    const after = await getSession(server, account.token)
    expect(after.status).toBe(401)
    expect(after.body.error).toBe('unauthorized')
    expect((await server.request('POST', '/api/auth/sign-out', { token: account.token })).status).toBe(401)
  })

  it('ends only that session: another session of the same account goes on', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const other = await signInEmail(server, { email: account.email, password: account.password })
    expect((await server.request('POST', '/api/auth/sign-out', { token: account.token })).status).toBe(200)
    expect((await getSession(server, account.token)).status).toBe(401)
    expect((await getSession(server, other.body.token)).status).toBe(200)
    // The account can sign in again.
    expect((await signInEmail(server, { email: account.email, password: account.password })).status).toBe(200)
  })

  it('refuses an API key with 400 invalid_request and leaves the key working', async () => {
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'sign-out probe', capabilities: ['system/users:read'] },
    })
    const reply = await server.request('POST', '/api/auth/sign-out', { token: key.body.raw })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect((await server.request('GET', '/api/v1/users', { token: key.body.raw })).status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'no credential',
        method: 'POST',
        path: '/api/auth/sign-out',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'an unknown token',
        method: 'POST',
        path: '/api/auth/sign-out',
        as: 'not-a-real-session-token',
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )
})

describe('changes to an account take effect on its very next request', () => {
  it('a role change shows in get-session and in what the session may do at once', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await getSession(server, account.token)).body.user.role).toBe('viewer')
    expect((await server.request('GET', '/api/v1/users', { token: account.token })).status).toBe(403)
    expect((await patchUser(server, owner.token, account.id, { role: 'admin' })).status).toBe(200)
    expect((await getSession(server, account.token)).body.user.role).toBe('admin')
    expect((await server.request('GET', '/api/v1/users', { token: account.token })).status).toBe(200)
    expect((await patchUser(server, owner.token, account.id, { role: 'viewer' })).status).toBe(200)
    expect((await getSession(server, account.token)).body.user.role).toBe('viewer')
    expect((await server.request('GET', '/api/v1/users', { token: account.token })).status).toBe(403)
  })

  it('a new name shows in get-session at once, and the session goes on', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer', name: 'Before' })
    expect((await getSession(server, account.token)).body.user.name).toBe('Before')
    expect((await patchUser(server, owner.token, account.id, { name: 'After' })).status).toBe(200)
    const reply = await getSession(server, account.token)
    expect(reply.status).toBe(200)
    expect(reply.body.user.name).toBe('After')
  })

  it('a ban ends every session of the account', async () => {
    const account = await createAccount(server, owner.token, { role: 'editor' })
    const second = await signInEmail(server, { email: account.email, password: account.password })
    expect((await getSession(server, account.token)).status).toBe(200)
    expect((await getSession(server, second.body.token)).status).toBe(200)
    expect((await patchUser(server, owner.token, account.id, { banned: true })).status).toBe(200)
    expect((await getSession(server, account.token)).status).toBe(401)
    expect((await getSession(server, second.body.token)).status).toBe(401)
    // Lifting the ban does not bring old sessions back.
    expect((await patchUser(server, owner.token, account.id, { banned: false })).status).toBe(200)
    expect((await getSession(server, account.token)).status).toBe(401)
  })

  it('a password change ends every session; the old password stops working and the new one works', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await getSession(server, account.token)).status).toBe(200)
    expect((await patchUser(server, owner.token, account.id, { password: 'a brand new password' })).status).toBe(200)
    expect((await getSession(server, account.token)).status).toBe(401)
    expect((await signInEmail(server, { email: account.email, password: account.password })).status).toBe(401)
    const fresh = await signInEmail(server, { email: account.email, password: 'a brand new password' })
    expect(fresh.status, fresh.text).toBe(200)
    expect((await getSession(server, fresh.body.token)).status).toBe(200)
  })

  it('deleting the account ends its sessions and its sign-in', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await getSession(server, account.token)).status).toBe(200)
    const deleted = await server.request('DELETE', `/api/v1/users/${account.id}`, { token: owner.token })
    expect(deleted.status, deleted.text).toBe(200)
    expect((await getSession(server, account.token)).status).toBe(401)
    const signIn = await signInEmail(server, { email: account.email, password: account.password })
    expect(signIn.status).toBe(401)
    expect(signIn.body.error).toBe('unauthorized')
  })

  it("another account's sessions are untouched", async () => {
    const bystander = await createAccount(server, owner.token, { role: 'viewer' })
    const target = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await patchUser(server, owner.token, target.id, { banned: true })).status).toBe(200)
    expect((await getSession(server, bystander.token)).status).toBe(200)
  })
})
