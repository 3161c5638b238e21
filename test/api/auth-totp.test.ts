import { Secret, TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

let server: TestServer
let owner: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const settings = await server.request('PATCH', '/api/v1/settings', {
    token: owner.token,
    body: { 'auth.usernameEnabled': true },
  })
  expect(settings.status, settings.text).toBe(200)
})
afterAll(async () => {
  await server?.stop()
})

// What an authenticator app computes: RFC 6238, SHA-1, 6 digits, 30 s.
const authenticator = (secret: string) =>
  new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
const codeOf = (secret: string) => authenticator(secret).generate()
/** A well-formed code that no step near now produces, so it is wrong whenever the server checks it. */
function wrongCodeOf(secret: string): string {
  const near = new Set(
    [-90, -60, -30, 0, 30, 60, 90].map((s) => authenticator(secret).generate({ timestamp: Date.now() + s * 1000 })),
  )
  return ['000000', '111111', '222222', '333333', '444444', '555555', '666666', '777777', '888888'].find(
    (c) => !near.has(c),
  )!
}

let counter = 0
const post = (path: string, token: string | undefined, body?: unknown) => server.request('POST', path, { token, body })
const signIn = (account: { email: string; password: string }, code?: string) =>
  post('/api/auth/sign-in/email', undefined, {
    email: account.email,
    password: account.password,
    ...(code === undefined ? {} : { code }),
  })
const totpEnabled = async (id: string) =>
  (await server.request('GET', `/api/v1/users/${id}`, { token: owner.token })).body.data.totpEnabled

async function enroll(account: Account): Promise<string> {
  const reply = await post('/api/auth/totp/enroll', account.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.secret
}

/** A signed-in account with two-factor on. Its current code has not been used for a sign-in yet. */
async function enrolledAccount(): Promise<Account & { secret: string; username: string }> {
  const username = `totp${++counter}x${Date.now().toString(36)}`
  const account = await createAccount(server, owner.token, { role: 'viewer', username })
  const secret = await enroll(account)
  const confirmed = await post('/api/auth/totp/confirm', account.token, { code: codeOf(secret) })
  expect(confirmed.status, confirmed.text).toBe(200)
  return { ...account, secret, username }
}

describe('POST /api/auth/totp/enroll', () => {
  it('answers exactly { secret, uri } with an otpauth://totp/ URI an authenticator app reads', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await post('/api/auth/totp/enroll', account.token)
    expect(reply.status, reply.text).toBe(200)
    expect(Object.keys(reply.body).sort()).toEqual(['secret', 'uri'])
    expect(reply.headers.get('cache-control')).toBe('no-store')
    const { secret, uri } = reply.body as { secret: string; uri: string }
    expect(secret).toMatch(/^[A-Z2-7]{16,}=*$/)
    expect(uri.startsWith('otpauth://totp/')).toBe(true)
    const parsed = URI.parse(uri)
    expect(parsed).toBeInstanceOf(TOTP)
    expect(parsed.secret.base32).toBe(secret)
    expect(parsed).toMatchObject({ algorithm: 'SHA1', digits: 6, issuer: 'Plinth', label: account.email })
    expect((parsed as TOTP).period).toBe(30)
  })

  it('is not active until confirmed: sign-in still needs no code, and the secret is never shown again', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const secret = await enroll(account)
    expect(await totpEnabled(account.id)).toBe(false)
    expect((await signIn(account)).status).toBe(200)
    const profile = await server.request('GET', `/api/v1/users/${account.id}`, { token: owner.token })
    expect(profile.text).not.toContain(secret)
    const session = await server.request('GET', '/api/auth/get-session', { token: account.token })
    expect(session.text).not.toContain(secret)
  })

  it('replaces an unconfirmed secret when started again: only the newest one confirms', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const first = await enroll(account)
    const second = await enroll(account)
    expect(second).not.toBe(first)
    const stale = await post('/api/auth/totp/confirm', account.token, { code: codeOf(first) })
    expect(stale.status, stale.text).toBe(400)
    expect(stale.body.error).toBe('invalid_request')
    expect((await post('/api/auth/totp/confirm', account.token, { code: codeOf(second) })).status).toBe(200)
  })

  it('refuses with 409 conflict while two-factor is on, and the enrolled secret keeps working', async () => {
    const account = await enrolledAccount()
    const again = await post('/api/auth/totp/enroll', account.token)
    expect(again.status, again.text).toBe(409)
    expect(again.body.error).toBe('conflict')
    expect(again.text).not.toMatch(/"secret"/)
    expect((await signIn(account, codeOf(account.secret))).status).toBe(200)
  })

  it('refuses an API key with 403 forbidden: only a person enrols', async () => {
    const key = await post('/api/auth/api-keys', owner.token, { label: 'totp probe', capabilities: [] })
    expect(key.status, key.text).toBe(201)
    const reply = await post('/api/auth/totp/enroll', key.body.raw)
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
  })
})

describe('POST /api/auth/totp/confirm', () => {
  it('turns two-factor on with a code from the app: { enabled: true }', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const secret = await enroll(account)
    const reply = await post('/api/auth/totp/confirm', account.token, { code: codeOf(secret) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ enabled: true })
    expect(await totpEnabled(account.id)).toBe(true)
    // The session that turned it on goes on.
    expect((await server.request('GET', '/api/auth/get-session', { token: account.token })).status).toBe(200)
  })

  it('refuses a wrong code with 400 invalid_request and leaves two-factor off', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const secret = await enroll(account)
    const reply = await post('/api/auth/totp/confirm', account.token, { code: wrongCodeOf(secret) })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect(await totpEnabled(account.id)).toBe(false)
    expect((await signIn(account)).status).toBe(200)
    // The enrolment survives a mistyped code.
    expect((await post('/api/auth/totp/confirm', account.token, { code: codeOf(secret) })).status).toBe(200)
  })

  it('refuses with 400 invalid_request before enrolment and once already on', async () => {
    const fresh = await createAccount(server, owner.token, { role: 'viewer' })
    const early = await post('/api/auth/totp/confirm', fresh.token, { code: '123456' })
    expect(early.status, early.text).toBe(400)
    expect(early.body.error).toBe('invalid_request')
    const enrolled = await enrolledAccount()
    const twice = await post('/api/auth/totp/confirm', enrolled.token, { code: codeOf(enrolled.secret) })
    expect(twice.status, twice.text).toBe(400)
    expect(twice.body.error).toBe('invalid_request')
  })

  it('writes user.totp_enabled to the audit log', async () => {
    const account = await enrolledAccount()
    const log = await server.request('GET', '/api/v1/audit-log?action=user.totp_enabled', { token: owner.token })
    expect(log.status).toBe(200)
    expect(log.body.data[0]).toMatchObject({
      action: 'user.totp_enabled',
      actor: { type: 'user', id: account.id },
      target: { type: 'user', id: account.id },
    })
    expect(log.text).not.toContain(account.secret)
  })
})

describe('signing in with two-factor on', () => {
  it('without a code is 403 mfa_required, for email and for username sign-in', async () => {
    const account = await enrolledAccount()
    const byEmail = await signIn(account)
    expect(byEmail.status, byEmail.text).toBe(403)
    expect(byEmail.body.error).toBe('mfa_required')
    expect(byEmail.text).not.toContain('"token"')
    const byName = await post('/api/auth/sign-in/username', undefined, {
      username: account.username,
      password: account.password,
    })
    expect(byName.status, byName.text).toBe(403)
    expect(byName.body.error).toBe('mfa_required')
  })

  it('with a wrong password is the generic 401 whatever the code', async () => {
    const account = await enrolledAccount()
    const reply = await signIn({ email: account.email, password: 'not the password' }, codeOf(account.secret))
    expect(reply.status).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
    const noCode = await signIn({ email: account.email, password: 'not the password' })
    expect(noCode.status).toBe(401)
  })

  it('with a wrong code is 401 unauthorized', async () => {
    const account = await enrolledAccount()
    const reply = await signIn(account, wrongCodeOf(account.secret))
    expect(reply.status, reply.text).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
    expect(reply.text).not.toContain('"token"')
  })

  it('with the right code opens a session', async () => {
    const account = await enrolledAccount()
    const reply = await signIn(account, codeOf(account.secret))
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      token: expect.any(String),
      user: { id: account.id, email: account.email, name: 'viewer', role: 'viewer' },
    })
    const session = await server.request('GET', '/api/auth/get-session', { token: reply.body.token })
    expect(session.status).toBe(200)
    expect(session.body.user.id).toBe(account.id)
  })

  it('with the right code by username opens a session', async () => {
    const account = await enrolledAccount()
    const reply = await post('/api/auth/sign-in/username', undefined, {
      username: account.username,
      password: account.password,
      code: codeOf(account.secret),
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.user.id).toBe(account.id)
  })

  it('does not accept the same code twice', async () => {
    const account = await enrolledAccount()
    const code = codeOf(account.secret)
    expect((await signIn(account, code)).status).toBe(200)
    const replay = await signIn(account, code)
    expect(replay.status, replay.text).toBe(401)
    expect(replay.body.error).toBe('unauthorized')
    expect(replay.text).not.toContain('"token"')
  })

  it('does not accept the same code twice even when both sign-ins arrive at once', async () => {
    const account = await enrolledAccount()
    const code = codeOf(account.secret)
    const replies = await Promise.all([1, 2, 3, 4].map(() => signIn(account, code)))
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401, 401, 401])
  })

  it("does not accept one account's code for another", async () => {
    const a = await enrolledAccount()
    const b = await enrolledAccount()
    const code = codeOf(a.secret)
    if (code === codeOf(b.secret)) return // one chance in a million: the two secrets agree this step
    expect((await signIn(b, code)).status).toBe(401)
  })
})

describe('POST /api/auth/totp/disable', () => {
  it('turns two-factor off with a current code: { enabled: false }, and sign-in needs no code again', async () => {
    const account = await enrolledAccount()
    const reply = await post('/api/auth/totp/disable', account.token, { code: codeOf(account.secret) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ enabled: false })
    expect(await totpEnabled(account.id)).toBe(false)
    expect((await signIn(account)).status).toBe(200)
  })

  it('refuses a wrong code with 401 and leaves two-factor on', async () => {
    const account = await enrolledAccount()
    const reply = await post('/api/auth/totp/disable', account.token, { code: wrongCodeOf(account.secret) })
    expect(reply.status, reply.text).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
    expect(await totpEnabled(account.id)).toBe(true)
    expect((await signIn(account)).body.error).toBe('mfa_required')
  })

  it('refuses with 400 invalid_request when two-factor is not on', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await post('/api/auth/totp/disable', account.token, { code: '123456' })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
  })

  it('lets the account enrol a new secret afterwards, whose first code signs in', async () => {
    const account = await enrolledAccount()
    expect((await post('/api/auth/totp/disable', account.token, { code: codeOf(account.secret) })).status).toBe(200)
    const secret = await enroll(account)
    expect(secret).not.toBe(account.secret)
    expect((await post('/api/auth/totp/confirm', account.token, { code: codeOf(secret) })).status).toBe(200)
    expect((await signIn(account)).body.error).toBe('mfa_required')
    const reply = await signIn(account, codeOf(secret))
    expect(reply.status, reply.text).toBe(200)
  })

  it('writes user.totp_disabled to the audit log', async () => {
    const account = await enrolledAccount()
    expect((await post('/api/auth/totp/disable', account.token, { code: codeOf(account.secret) })).status).toBe(200)
    const log = await server.request('GET', '/api/v1/audit-log?action=user.totp_disabled', { token: owner.token })
    expect(log.body.data[0]).toMatchObject({ action: 'user.totp_disabled', target: { type: 'user', id: account.id } })
  })
})

describe('TOTP endpoints refuse', () => {
  runScenarios(
    () => server,
    [
      {
        name: 'enrolment without a session',
        method: 'POST',
        path: '/api/auth/totp/enroll',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'confirmation without a session',
        method: 'POST',
        path: '/api/auth/totp/confirm',
        body: { code: '123456' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'disabling without a session',
        method: 'POST',
        path: '/api/auth/totp/disable',
        body: { code: '123456' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'enrolment with an unknown token',
        method: 'POST',
        path: '/api/auth/totp/enroll',
        as: 'not-a-session',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a code of 5 digits',
        method: 'POST',
        path: '/api/auth/totp/confirm',
        as: () => owner.token,
        body: { code: '12345' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a code with letters',
        method: 'POST',
        path: '/api/auth/totp/confirm',
        as: () => owner.token,
        body: { code: '12a456' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a missing code',
        method: 'POST',
        path: '/api/auth/totp/disable',
        as: () => owner.token,
        body: {},
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a code of a wrong type',
        method: 'POST',
        path: '/api/auth/totp/disable',
        as: () => owner.token,
        body: { code: 123456 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})
