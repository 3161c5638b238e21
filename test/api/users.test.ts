import { builtInRoles, VIEWER } from '../../src/modules/access/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

let server: TestServer
let owner: Account
let admin: Account
let viewer: Account
let editor: Account
let otherProjectId: string

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  editor = await createAccount(server, owner.token, { role: 'editor' })
  const project = await server.request('POST', '/api/v1/projects', {
    token: owner.token,
    body: { name: 'Second project' },
  })
  expect(project.status, project.text).toBe(201)
  otherProjectId = project.body.data.id
})
afterAll(async () => {
  await server?.stop()
})

const get = (path: string, token: string, headers?: Record<string, string>) =>
  server.request('GET', path, { token, headers })
const post = (path: string, token: string, body: unknown, headers?: Record<string, string>) =>
  server.request('POST', path, { token, body, headers })
const patch = (path: string, token: string, body: unknown, headers?: Record<string, string>) =>
  server.request('PATCH', path, { token, body, headers })
const del = (path: string, token: string, headers?: Record<string, string>) =>
  server.request('DELETE', path, { token, headers })

let seq = 0
const freshEmail = (prefix = 'user') => `${prefix}-${Date.now().toString(36)}-${seq++}@example.com`
const freshUsername = (prefix = 'user') => `${prefix}_${Date.now().toString(36)}_${seq++}`

const signIn = (email: string, password: string) =>
  server.request('POST', '/api/auth/sign-in/email', { body: { email, password } })
const session = (token: string) => get('/api/auth/get-session', token)

/** Every key of a JSON value, at any depth. */
function allKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(allKeys)
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...allKeys(v)])
  return []
}

/** No credential material: no password, hash or secret keys, no TOTP secret, no stored hash in the text. */
function expectNoCredentials(text: string, body: unknown, passwords: string[] = []): void {
  for (const key of allKeys(body)) {
    expect(key, key).not.toMatch(/password|hash|secret|salt/i)
    if (/totp/i.test(key)) expect(key).toBe('totpEnabled')
  }
  expect(text).not.toContain('pbkdf2')
  for (const p of passwords) expect(text).not.toContain(p)
}

const userShape = (over: Record<string, unknown> = {}) => ({
  id: expect.any(String),
  email: expect.toBeOneOf([expect.any(String), null]),
  username: expect.toBeOneOf([expect.any(String), null]),
  name: expect.any(String),
  role: expect.any(String),
  projectId: expect.any(String),
  banned: expect.any(Boolean),
  totpEnabled: expect.any(Boolean),
  createdAt: expect.any(Number),
  updatedAt: expect.any(Number),
  lastSignInAt: expect.toBeOneOf([expect.any(Number), null]),
  ...over,
})

describe('GET /api/v1/users', () => {
  it("answers the paging envelope with the project's users", async () => {
    const reply = await get('/api/v1/users', owner.token)
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body).sort()).toEqual(['data', 'hasMore', 'limit', 'page', 'total'])
    expect(reply.body).toMatchObject({ page: 1, limit: 25, hasMore: false })
    expect(reply.body.total).toBe(reply.body.data.length)
    const ids = (reply.body.data as any[]).map((u) => u.id)
    expect(ids).toEqual(expect.arrayContaining([owner.id, admin.id, viewer.id, editor.id]))
    for (const user of reply.body.data) expect(user).toEqual(userShape())
    const me = (reply.body.data as any[]).find((u) => u.id === owner.id)
    expect(me).toMatchObject({ email: owner.email, role: 'super_admin', banned: false })
  })

  it('never carries password material, even for an account with two-factor secrets', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer', password: 'unique-password-xyz' })
    const enrol = await post('/api/auth/totp/enroll', account.token, {})
    expect(enrol.status, enrol.text).toBe(200)
    const secret = enrol.body.secret as string
    for (const reply of [
      await get('/api/v1/users?limit=100', owner.token),
      await get(`/api/v1/users/${account.id}`, owner.token),
    ]) {
      expect(reply.status).toBe(200)
      expectNoCredentials(reply.text, reply.body, [owner.password, account.password, secret])
    }
  })

  it('pages through the users, oldest first, without overlap', async () => {
    for (let i = 0; i < 3; i++) await createAccount(server, owner.token, { role: 'viewer' })
    const all = await get('/api/v1/users?limit=100', owner.token)
    const total = all.body.total as number
    expect(total).toBeGreaterThanOrEqual(7)
    // Oldest first (timestamps are whole seconds; ties keep a stable order).
    const created = (all.body.data as any[]).map((u) => u.createdAt as number)
    expect(created).toEqual([...created].sort((a, b) => a - b))
    const seen: string[] = []
    for (let page = 1; ; page++) {
      const reply = await get(`/api/v1/users?page=${page}&limit=2`, owner.token)
      expect(reply.status).toBe(200)
      expect(reply.body).toMatchObject({ page, limit: 2, total, hasMore: page * 2 < total })
      seen.push(...(reply.body.data as any[]).map((u) => u.id))
      if (!reply.body.hasMore) break
    }
    expect(seen).toEqual((all.body.data as any[]).map((u) => u.id))
    const beyond = await get(`/api/v1/users?page=${Math.ceil(total / 2) + 1}&limit=2`, owner.token)
    expect(beyond.body).toMatchObject({ data: [], total, hasMore: false })
  })

  runScenarios(
    () => server,
    [
      {
        name: 'page 0',
        method: 'GET',
        path: '/api/v1/users?page=0',
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'limit over 100',
        method: 'GET',
        path: '/api/v1/users?limit=101',
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'limit not a number',
        method: 'GET',
        path: '/api/v1/users?limit=ten',
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an admin may list',
        method: 'GET',
        path: '/api/v1/users',
        as: () => admin.token,
        status: 200,
        contains: { page: 1 },
      },
    ],
  )
})

describe('POST /api/v1/users', () => {
  it('creates an account (201) that can sign in with its password', async () => {
    const email = freshEmail('new')
    const reply = await post('/api/v1/users', owner.token, {
      email,
      password: 'new password 1',
      name: 'New Person',
      role: 'editor',
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toEqual({
      data: userShape({
        email,
        username: null,
        name: 'New Person',
        role: 'editor',
        banned: false,
        totpEnabled: false,
        lastSignInAt: null,
      }),
    })
    expectNoCredentials(reply.text, reply.body, ['new password 1'])
    const signedIn = await signIn(email, 'new password 1')
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body.user).toMatchObject({ id: reply.body.data.id, role: 'editor' })
    expect((await get(`/api/v1/users/${reply.body.data.id}`, owner.token)).body.data).toMatchObject({
      email,
      role: 'editor',
    })
  })

  it('stores the email in lower case, so another spelling is a duplicate (409)', async () => {
    const email = freshEmail('Mixed')
    const reply = await post('/api/v1/users', owner.token, { email, password: 'a good password', role: 'viewer' })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.email).toBe(email.toLowerCase())
    const again = await post('/api/v1/users', owner.token, {
      email: email.toUpperCase(),
      password: 'a good password',
      role: 'viewer',
    })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: 'already_exists', details: { fields: ['email'] } })
  })

  it('a duplicate email is 409 and creates nothing', async () => {
    const before = (await get('/api/v1/users?limit=100', owner.token)).body.total
    const reply = await post('/api/v1/users', owner.token, {
      email: viewer.email,
      password: 'a good password',
      role: 'editor',
    })
    expect(reply.status).toBe(409)
    expect(reply.body.error).toBe('already_exists')
    expect((await get('/api/v1/users?limit=100', owner.token)).body.total).toBe(before)
  })

  it('creates a username-only account while emails are optional, and refuses the same username again (409, any case)', async () => {
    expect((await patch('/api/v1/settings', owner.token, { 'auth.requireEmail': false })).status).toBe(200)
    const username = freshUsername('solo')
    const reply = await post('/api/v1/users', owner.token, { username, password: 'a good password', role: 'viewer' })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data).toMatchObject({ username, email: null, role: 'viewer' })
    const again = await post('/api/v1/users', owner.token, {
      username: username.toUpperCase(),
      email: freshEmail(),
      password: 'a good password',
      role: 'viewer',
    })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: 'already_exists', details: { fields: ['username'] } })
    expect((await patch('/api/v1/settings', owner.token, { 'auth.requireEmail': true })).status).toBe(200)
  })

  it('refuses an account without an email while auth.requireEmail is on (400)', async () => {
    expect((await get('/api/v1/settings', owner.token)).body.data['auth.requireEmail']).toBe(true)
    const username = freshUsername('noemail')
    const reply = await post('/api/v1/users', owner.token, { username, password: 'a good password', role: 'viewer' })
    expect(reply.status, reply.text).toBe(400)
  })

  it('an admin can create an editor and an admin', async () => {
    for (const role of ['editor', 'admin']) {
      const reply = await post('/api/v1/users', admin.token, {
        email: freshEmail(role),
        password: 'a good password',
        role,
      })
      expect(reply.status, reply.text).toBe(201)
      expect(reply.body.data.role).toBe(role)
    }
  })

  it('an admin cannot create a super_admin (403), and nothing is created', async () => {
    const email = freshEmail('boss')
    const reply = await post('/api/v1/users', admin.token, { email, password: 'a good password', role: 'super_admin' })
    expect(reply.status).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect(
      ((await get('/api/v1/users?limit=100', owner.token)).body.data as any[]).some((u) => u.email === email),
    ).toBe(false)
    expect((await signIn(email, 'a good password')).status).toBe(401)
  })

  it('the owner can create another super_admin', async () => {
    const reply = await post('/api/v1/users', owner.token, {
      email: freshEmail('co-owner'),
      password: 'a good password',
      role: 'super_admin',
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.role).toBe('super_admin')
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown role',
        method: 'POST',
        path: '/api/v1/users',
        as: () => owner.token,
        body: { email: 'r1@example.com', password: 'a good password', role: 'wizard' },
        status: 400,
        contains: { error: 'invalid_request', details: { role: 'wizard' } },
      },
      {
        name: 'neither email nor username',
        method: 'POST',
        path: '/api/v1/users',
        as: () => owner.token,
        body: { password: 'a good password', name: 'Nobody', role: 'viewer' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'malformed email',
        method: 'POST',
        path: '/api/v1/users',
        as: () => owner.token,
        body: { email: 'not-an-email', password: 'a good password', role: 'viewer' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'short password',
        method: 'POST',
        path: '/api/v1/users',
        as: () => owner.token,
        body: { email: 'r2@example.com', password: 'short', role: 'viewer' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no password',
        method: 'POST',
        path: '/api/v1/users',
        as: () => owner.token,
        body: { email: 'r3@example.com', role: 'viewer' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no role',
        method: 'POST',
        path: '/api/v1/users',
        as: () => owner.token,
        body: { email: 'r4@example.com', password: 'a good password' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'bad username',
        method: 'POST',
        path: '/api/v1/users',
        as: () => owner.token,
        body: { username: 'a b', password: 'a good password', role: 'viewer' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an editor may not create accounts',
        method: 'POST',
        path: '/api/v1/users',
        as: () => editor.token,
        body: { email: 'r5@example.com', password: 'a good password', role: 'viewer' },
        status: 403,
        contains: { error: 'forbidden' },
      },
    ],
  )

  it('none of the refused accounts exist', async () => {
    const emails = ((await get('/api/v1/users?limit=100', owner.token)).body.data as any[]).map((u) => u.email)
    for (const e of ['r1@example.com', 'r2@example.com', 'r3@example.com', 'r4@example.com', 'r5@example.com'])
      expect(emails).not.toContain(e)
  })
})

describe('GET /api/v1/users/:id', () => {
  it('returns one user', async () => {
    const reply = await get(`/api/v1/users/${viewer.id}`, admin.token)
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ data: userShape({ id: viewer.id, email: viewer.email, role: 'viewer' }) })
  })

  it('records the last sign-in', async () => {
    const reply = await get(`/api/v1/users/${viewer.id}`, owner.token)
    expect(reply.body.data.lastSignInAt).toEqual(expect.any(Number))
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown id',
        method: 'GET',
        path: '/api/v1/users/nope',
        as: () => owner.token,
        status: 404,
        contains: { error: 'not_found' },
      },
    ],
  )
})

describe('users of another project are missing here', () => {
  let stranger: { id: string; email: string }
  const there = () => ({ 'X-Project-Id': otherProjectId })

  beforeAll(async () => {
    const email = freshEmail('stranger')
    const reply = await post(
      '/api/v1/users',
      owner.token,
      { email, password: 'a good password', role: 'editor' },
      there(),
    )
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.projectId).toBe(otherProjectId)
    stranger = { id: reply.body.data.id, email }
  })

  it('GET, PATCH and DELETE answer 404 from the default project, even for the owner', async () => {
    for (const token of [owner.token, admin.token]) {
      expect((await get(`/api/v1/users/${stranger.id}`, token)).status).toBe(404)
      const changed = await patch(`/api/v1/users/${stranger.id}`, token, { name: 'hijacked' })
      expect(changed.status).toBe(404)
      expect(changed.body.error).toBe('not_found')
      expect((await del(`/api/v1/users/${stranger.id}`, token)).status).toBe(404)
    }
    const seen = await get(`/api/v1/users/${stranger.id}`, owner.token, there())
    expect(seen.status).toBe(200)
    expect(seen.body.data).toMatchObject({ name: '', email: stranger.email, projectId: otherProjectId })
  })

  it('the lists of the two projects do not mix', async () => {
    const home = ((await get('/api/v1/users?limit=100', owner.token)).body.data as any[]).map((u) => u.id)
    const away = await get('/api/v1/users?limit=100', owner.token, there())
    expect(home).not.toContain(stranger.id)
    expect(away.body).toMatchObject({ total: 1, data: [{ id: stranger.id, role: 'editor' }] })
  })

  it("the stranger cannot see the default project's users", async () => {
    const signedIn = await signIn(stranger.email, 'a good password')
    expect(signedIn.status, signedIn.text).toBe(200)
    expect((await get(`/api/v1/users/${viewer.id}`, signedIn.body.token)).status).toBe(403)
  })
})

describe('PATCH /api/v1/users/:id', () => {
  it('changes the name', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await patch(`/api/v1/users/${account.id}`, admin.token, { name: '  Renamed Person ' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ id: account.id, name: 'Renamed Person', role: 'viewer' })
    expect((await get(`/api/v1/users/${account.id}`, owner.token)).body.data.name).toBe('Renamed Person')
    // A profile change does not end the session.
    expect((await session(account.token)).status).toBe(200)
  })

  it('a role change shows in get-session and in permissions at once', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await session(account.token)).body.user.role).toBe('viewer')
    expect((await get('/api/v1/users', account.token)).status).toBe(403)
    const reply = await patch(`/api/v1/users/${account.id}`, owner.token, { role: 'admin' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.role).toBe('admin')
    const after = await session(account.token)
    expect(after.status).toBe(200)
    expect(after.body.user).toMatchObject({ id: account.id, role: 'admin' })
    expect((await get('/api/v1/users', account.token)).status).toBe(200)
    expect((await patch(`/api/v1/users/${account.id}`, owner.token, { role: 'viewer' })).status).toBe(200)
    expect((await session(account.token)).body.user.role).toBe('viewer')
    expect((await get('/api/v1/users', account.token)).status).toBe(403)
  })

  it('a ban ends the sessions at once and blocks sign-in; lifting it lets the user back', async () => {
    const account = await createAccount(server, owner.token, { role: 'editor' })
    const reply = await patch(`/api/v1/users/${account.id}`, admin.token, { banned: true })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.banned).toBe(true)
    const after = await session(account.token)
    expect(after.status).toBe(401)
    expect(after.body.error).toBe('unauthorized')
    const refused = await signIn(account.email, account.password)
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('account_banned')
    expect((await get(`/api/v1/users/${account.id}`, owner.token)).body.data.banned).toBe(true)

    expect((await patch(`/api/v1/users/${account.id}`, admin.token, { banned: false })).body.data.banned).toBe(false)
    const back = await signIn(account.email, account.password)
    expect(back.status, back.text).toBe(200)
    expect((await session(back.body.token)).status).toBe(200)
  })

  it('a new password works at once, the old one no longer, and old sessions end', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await patch(`/api/v1/users/${account.id}`, admin.token, { password: 'the new password' })
    expect(reply.status, reply.text).toBe(200)
    expectNoCredentials(reply.text, reply.body, ['the new password'])
    expect((await signIn(account.email, account.password)).status).toBe(401)
    expect((await signIn(account.email, 'the new password')).status).toBe(200)
    expect((await session(account.token)).status).toBe(401)
  })

  it('you cannot ban yourself (400), as owner or admin', async () => {
    for (const me of [owner, admin]) {
      const reply = await patch(`/api/v1/users/${me.id}`, me.token, { banned: true })
      expect(reply.status).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect((await session(me.token)).status).toBe(200)
    }
    expect((await get(`/api/v1/users/${admin.id}`, owner.token)).body.data.banned).toBe(false)
  })

  it('you may rename yourself', async () => {
    const reply = await patch(`/api/v1/users/${admin.id}`, admin.token, { name: 'The Admin' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.name).toBe('The Admin')
  })

  describe('an admin cannot reach a super_admin', () => {
    it.each([
      { name: 'rename', body: { name: 'Demoted' } },
      { name: 'role change', body: { role: 'viewer' } },
      { name: 'ban', body: { banned: true } },
      { name: 'password', body: { password: 'taken over!' } },
    ])('$name → 403', async ({ body }) => {
      const reply = await patch(`/api/v1/users/${owner.id}`, admin.token, body)
      expect(reply.status).toBe(403)
      expect(reply.body.error).toBe('forbidden')
      const me = await session(owner.token)
      expect(me.status).toBe(200)
      expect(me.body.user).toMatchObject({ role: 'super_admin', name: 'Owner' })
    })

    it('delete → 403', async () => {
      const reply = await del(`/api/v1/users/${owner.id}`, admin.token)
      expect(reply.status).toBe(403)
      expect((await get(`/api/v1/users/${owner.id}`, owner.token)).status).toBe(200)
    })

    it('promoting anyone to super_admin → 403', async () => {
      const reply = await patch(`/api/v1/users/${viewer.id}`, admin.token, { role: 'super_admin' })
      expect(reply.status).toBe(403)
      expect((await get(`/api/v1/users/${viewer.id}`, owner.token)).body.data.role).toBe('viewer')
    })
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown id',
        method: 'PATCH',
        path: '/api/v1/users/nope',
        as: () => owner.token,
        body: { name: 'x' },
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'unknown id with a role change',
        method: 'PATCH',
        path: '/api/v1/users/nope',
        as: () => owner.token,
        body: { role: 'viewer' },
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'banned not a boolean',
        method: 'PATCH',
        path: '/api/v1/users/nope',
        as: () => owner.token,
        body: { banned: 'yes' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'short password',
        method: 'PATCH',
        path: '/api/v1/users/nope',
        as: () => owner.token,
        body: { password: 'short' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )

  it('an unknown role on a real user is 400 and changes nothing', async () => {
    const reply = await patch(`/api/v1/users/${viewer.id}`, owner.token, { role: 'wizard', name: 'Wizard' })
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect((await get(`/api/v1/users/${viewer.id}`, owner.token)).body.data).toMatchObject({
      role: 'viewer',
      name: 'viewer',
    })
  })
})

describe('a non-admin role that manages users reaches no higher than itself', () => {
  let helpdesk: Account
  let roleName: string
  beforeAll(async () => {
    roleName = `helpdesk_${Date.now().toString(36)}`
    expect((await post('/api/v1/roles', owner.token, { name: roleName })).status).toBe(201)
    const grants = ['read', 'create', 'update', 'delete'].map((action) => ({ resource: 'system/users', action }))
    const roles = await get('/api/v1/roles', owner.token)
    const id = (roles.body.data as any[]).find((r) => r.name === roleName).id
    const reply = await server.request('PUT', `/api/v1/roles/${id}/grants`, {
      token: owner.token,
      body: {
        grants: [
          ...grants,
          // Everything the viewer holds by default, so the viewer is within the role's reach.
          ...builtInRoles.find((r) => r.name === VIEWER)!.grants,
        ],
      },
    })
    expect(reply.status, reply.text).toBe(200)
    helpdesk = await createAccount(server, owner.token, { role: roleName })
  })

  it('creates a viewer (whose grants it holds)', async () => {
    const reply = await post('/api/v1/users', helpdesk.token, {
      email: freshEmail('hd-viewer'),
      password: 'a good password',
      role: 'viewer',
    })
    expect(reply.status, reply.text).toBe(201)
  })

  it.each(['editor', 'admin', 'super_admin'])(
    'cannot create an account with the role %s (403), and nothing is created',
    async (role) => {
      const email = freshEmail(`hd-${role}`)
      const reply = await post('/api/v1/users', helpdesk.token, { email, password: 'a good password', role })
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('forbidden')
      expect((await signIn(email, 'a good password')).status).toBe(401)
    },
  )

  it.each([
    { name: 'a new password', body: { password: 'taken over 123' } },
    { name: 'a ban', body: { banned: true } },
    { name: 'a new name', body: { name: 'Changed by helpdesk' } },
  ])('cannot give $name to an admin or an editor (403)', async ({ body }) => {
    for (const target of [admin, editor]) {
      const reply = await patch(`/api/v1/users/${target.id}`, helpdesk.token, body)
      expect(reply.status, target.role).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    expect((await signIn(admin.email, admin.password)).status).toBe(200)
    expect((await signIn(editor.email, editor.password)).status).toBe(200)
  })

  it('cannot delete an admin or an editor (403)', async () => {
    for (const target of [admin, editor])
      expect((await del(`/api/v1/users/${target.id}`, helpdesk.token)).status).toBe(403)
    expect((await get(`/api/v1/users/${editor.id}`, owner.token)).status).toBe(200)
  })

  it('manages a viewer: renames, resets the password, bans, deletes', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await patch(`/api/v1/users/${account.id}`, helpdesk.token, { name: 'Helped' })).status).toBe(200)
    expect((await patch(`/api/v1/users/${account.id}`, helpdesk.token, { password: 'fresh password 1' })).status).toBe(
      200,
    )
    expect((await signIn(account.email, 'fresh password 1')).status).toBe(200)
    expect((await patch(`/api/v1/users/${account.id}`, helpdesk.token, { banned: true })).status).toBe(200)
    expect((await del(`/api/v1/users/${account.id}`, helpdesk.token)).status).toBe(200)
    expect((await get(`/api/v1/users/${account.id}`, owner.token)).status).toBe(404)
  })

  it('issues a reset link for a viewer', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await post(`/api/v1/users/${account.id}/reset-link`, helpdesk.token, {})
    expect(reply.status, reply.text).toBe(200)
  })

  // A reset link hands over the account as surely as a new password does.
  it('cannot issue a reset link for an admin or an editor (403)', async () => {
    for (const target of [admin, editor]) {
      const reply = await post(`/api/v1/users/${target.id}/reset-link`, helpdesk.token, {})
      expect(reply.status, target.role).toBe(403)
    }
  })

  it('renames itself', async () => {
    const reply = await patch(`/api/v1/users/${helpdesk.id}`, helpdesk.token, { name: 'Helpdesk' })
    expect(reply.status, reply.text).toBe(200)
  })

  it('cannot promote itself', async () => {
    for (const role of ['editor', 'admin']) {
      const reply = await patch(`/api/v1/users/${helpdesk.id}`, helpdesk.token, { role })
      expect(reply.status, role).toBe(403)
    }
    expect((await session(helpdesk.token)).body.user.role).toBe(roleName)
  })
})

describe('DELETE /api/v1/users/:id', () => {
  it('deletes the account: then 404, its session and sign-in gone', async () => {
    const account = await createAccount(server, owner.token, { role: 'editor' })
    const reply = await del(`/api/v1/users/${account.id}`, admin.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true })
    expect((await get(`/api/v1/users/${account.id}`, owner.token)).status).toBe(404)
    expect((await del(`/api/v1/users/${account.id}`, owner.token)).status).toBe(404)
    expect((await session(account.token)).status).toBe(401)
    expect((await signIn(account.email, account.password)).status).toBe(401)
    const ids = ((await get('/api/v1/users?limit=100', owner.token)).body.data as any[]).map((u) => u.id)
    expect(ids).not.toContain(account.id)
  })

  it('you cannot delete yourself (400)', async () => {
    for (const me of [owner, admin]) {
      const reply = await del(`/api/v1/users/${me.id}`, me.token)
      expect(reply.status).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect((await session(me.token)).status).toBe(200)
    }
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown id',
        method: 'DELETE',
        path: '/api/v1/users/nope',
        as: () => owner.token,
        status: 404,
        contains: { error: 'not_found' },
      },
    ],
  )
})

describe('who may call the users endpoints', () => {
  const endpoints = [
    { method: 'GET', path: '/api/v1/users', permission: 'system/users:read' },
    {
      method: 'POST',
      path: '/api/v1/users',
      body: { email: 'blocked@example.com', password: 'a good password', role: 'viewer' },
      permission: 'system/users:create',
    },
    { method: 'GET', path: '/api/v1/users/{id}', permission: 'system/users:read' },
    { method: 'PATCH', path: '/api/v1/users/{id}', body: { name: 'blocked' }, permission: 'system/users:update' },
    { method: 'DELETE', path: '/api/v1/users/{id}', permission: 'system/users:delete' },
  ]
  const target = () => editor.id

  it.each(endpoints)('a viewer gets 403 on $method $path', async (e) => {
    const reply = await server.request(e.method, e.path.replace('{id}', target()), {
      token: viewer.token,
      body: e.body,
    })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect(reply.body.message).toContain(e.permission)
  })

  it.each(endpoints)('an editor gets 403 on $method $path', async (e) => {
    const reply = await server.request(e.method, e.path.replace('{id}', target()), {
      token: editor.token,
      body: e.body,
    })
    expect(reply.status, reply.text).toBe(403)
  })

  it.each(endpoints)('an anonymous caller gets 401 on $method $path', async (e) => {
    const reply = await server.request(e.method, e.path.replace('{id}', target()), { body: e.body })
    expect(reply.status, reply.text).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
  })

  it('nothing they sent was applied', async () => {
    const me = await get(`/api/v1/users/${editor.id}`, owner.token)
    expect(me.body.data).toMatchObject({ name: 'editor', banned: false })
    const emails = ((await get('/api/v1/users?limit=100', owner.token)).body.data as any[]).map((u) => u.email)
    expect(emails).not.toContain('blocked@example.com')
  })
})
