import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { startMailbox, type Mail, type Mailbox } from '../support/mailbox.js'
import { runScenarios } from '../support/scenarios.js'

const publicUrl = 'https://plinth.example'
const appOrigin = 'https://app.example'

let mailbox: Mailbox
let server: TestServer
let owner: Account
// An install with no email channel at all.
let noMail: TestServer

beforeAll(async () => {
  mailbox = await startMailbox()
  ;[server, noMail] = await Promise.all([
    startServer({ SMTP_URL: mailbox.url, PUBLIC_URL: publicUrl, CORS_ORIGINS: appOrigin }),
    startServer({ PUBLIC_URL: publicUrl }),
  ])
  owner = await signUpOwner(server)
  const settings = await server.request('PATCH', '/api/v1/settings', {
    token: owner.token,
    body: { 'auth.usernameEnabled': true },
  })
  expect(settings.status, settings.text).toBe(200)
})
afterAll(async () => {
  await Promise.all([server?.stop(), noMail?.stop()])
  await mailbox?.close()
})

let counter = 0
const unique = (prefix: string) => `${prefix}${++counter}x${Date.now().toString(36)}`
const mailsTo = (address: string) => mailbox.messages.filter((m) => m.to.includes(address))
const post = (path: string, body?: unknown, token?: string) => server.request('POST', path, { body, token })
const getSession = (token: string) => server.request('GET', '/api/auth/get-session', { token })
const signIn = (email: string, password: string) => post('/api/auth/sign-in/email', { email, password })

/** Every link in a mail that points at an address under `base`. */
function linksIn(mail: Mail, base = publicUrl): URL[] {
  const escaped = base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  return [...mail.text.matchAll(new RegExp(`${escaped}[^\\s"<>]*`, 'g'))].map((m) => new URL(m[0]))
}
/** The one link of a mail to `path` on PUBLIC_URL; fails the test when there is not exactly one. */
function linkIn(mail: Mail, path: string): URL {
  const links = linksIn(mail).filter((u) => u.pathname === path)
  expect(links, mail.text).toHaveLength(1)
  return links[0]!
}
/** Sends a request and waits for the one new mail to `to` that it causes. */
async function mailFrom(request: () => Promise<unknown>, to: string): Promise<Mail> {
  const before = mailsTo(to).length
  await request()
  const after = mailsTo(to)
  expect(after.length - before, `mails to ${to}`).toBe(1)
  return after[after.length - 1]!
}
const requestReset = (body: unknown) => post('/api/auth/request-password-reset', body)
const resetToken = async (email: string) => {
  const mail = await mailFrom(() => requestReset({ email }), email)
  return linkIn(mail, '/api/auth/reset-password').searchParams.get('token')!
}

describe('POST /api/auth/request-password-reset', () => {
  it('mails a known account a link <PUBLIC_URL>/api/auth/reset-password?token=…', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer', name: 'Rosa' })
    const reply = await requestReset({ email: account.email })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ status: true })
    const mail = await mailbox.waitFor((m) => m.to.includes(account.email))
    expect(mail.to).toEqual([account.email])
    const link = linkIn(mail, '/api/auth/reset-password')
    expect(link.origin).toBe(publicUrl)
    expect(link.searchParams.get('token')).toMatch(/^[\w-]{20,}$/)
    expect(mail.text).toContain('Rosa')
    // Nothing of the link leaks into the answer.
    expect(reply.text).not.toContain(link.searchParams.get('token')!)
  })

  it('answers { status: true } for an unknown email, and sends no mail', async () => {
    const before = mailbox.messages.length
    const nobody = `${unique('nobody')}@example.com`
    const reply = await requestReset({ email: nobody })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ status: true })
    expect(mailbox.messages.length).toBe(before)
    expect(mailsTo(nobody)).toEqual([])
  })

  it('answers the same for a known and an unknown address', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const known = await requestReset({ email: account.email })
    const unknown = await requestReset({ email: `${unique('nobody')}@example.com` })
    expect(unknown.status).toBe(known.status)
    expect(unknown.text).toBe(known.text)
  })

  it('takes the email in any letter case, as identifier or as email', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    await mailFrom(() => requestReset({ identifier: account.email.toUpperCase() }), account.email)
    await mailFrom(() => requestReset({ email: account.email.toUpperCase() }), account.email)
  })

  it('takes a username as the identifier and mails that account', async () => {
    const username = unique('rita')
    const account = await createAccount(server, owner.token, { role: 'viewer', username })
    const mail = await mailFrom(() => requestReset({ identifier: username.toUpperCase() }), account.email)
    expect(mail.text).toContain(username)
    const token = linkIn(mail, '/api/auth/reset-password').searchParams.get('token')!
    expect((await post('/api/auth/reset-password', { token, password: 'reset by username' })).status).toBe(200)
    expect((await signIn(account.email, 'reset by username')).status).toBe(200)
  })

  it('mails each account of a shared contact email separately, naming its username', async () => {
    const shared = `${unique('family')}@example.com`
    const accounts: { id: string; username: string }[] = []
    for (const username of [unique('anna'), unique('ben')]) {
      const created = await post(
        '/api/v1/users',
        { email: shared, username, password: 'family password', name: username, role: 'viewer' },
        owner.token,
      )
      expect(created.status, created.text).toBe(201)
      accounts.push({ id: created.body.data.id, username })
    }
    const reply = await requestReset({ identifier: shared })
    expect(reply.body).toEqual({ status: true })
    const mails = mailsTo(shared)
    expect(mails).toHaveLength(2)
    const byAccount = accounts.map((a) => mails.filter((m) => m.text.includes(a.username)))
    expect(byAccount.map((m) => m.length)).toEqual([1, 1])
    const [anna, ben] = accounts as [{ id: string; username: string }, { id: string; username: string }]
    const annaToken = linkIn(byAccount[0]![0]!, '/api/auth/reset-password').searchParams.get('token')!
    const benToken = linkIn(byAccount[1]![0]!, '/api/auth/reset-password').searchParams.get('token')!
    expect(annaToken).not.toBe(benToken)
    // Each link resets its own account only.
    expect((await post('/api/auth/reset-password', { token: annaToken, password: 'anna new password' })).status).toBe(
      200,
    )
    const byName = (username: string, password: string) => post('/api/auth/sign-in/username', { username, password })
    expect((await byName(anna.username, 'anna new password')).status).toBe(200)
    expect((await byName(ben.username, 'anna new password')).status).toBe(401)
    expect((await byName(ben.username, 'family password')).status).toBe(200)
  })

  it('sends nothing to a banned account', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect(
      (await server.request('PATCH', `/api/v1/users/${account.id}`, { token: owner.token, body: { banned: true } }))
        .status,
    ).toBe(200)
    const reply = await requestReset({ email: account.email })
    expect(reply.body).toEqual({ status: true })
    expect(mailsTo(account.email)).toEqual([])
  })

  it('points the link at a trusted redirectTo: a path on PUBLIC_URL or a CORS origin', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const onPath = await mailFrom(
      () => requestReset({ email: account.email, redirectTo: '/account/reset' }),
      account.email,
    )
    expect(linksIn(onPath).map((u) => u.pathname)).toEqual(['/account/reset'])
    const onApp = await mailFrom(
      () => requestReset({ email: account.email, redirectTo: `${appOrigin}/reset` }),
      account.email,
    )
    const [link] = linksIn(onApp, appOrigin)
    expect(link?.pathname).toBe('/reset')
    expect(link?.searchParams.get('token')).toMatch(/^[\w-]{20,}$/)
  })

  it('refuses an untrusted redirectTo with 400 invalid_request and sends nothing', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    for (const redirectTo of [
      'https://evil.example/reset',
      '//evil.example/reset',
      'javascript:alert(1)',
      'not a url',
    ]) {
      const reply = await requestReset({ email: account.email, redirectTo })
      expect(reply.status, redirectTo).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
    expect(mailsTo(account.email)).toEqual([])
  })

  runScenarios(
    () => server,
    [
      {
        name: 'no identifier at all still answers status true',
        method: 'POST',
        path: '/api/auth/request-password-reset',
        body: {},
        status: 200,
        contains: { status: true },
      },
      {
        name: 'an unknown username answers status true',
        method: 'POST',
        path: '/api/auth/request-password-reset',
        body: { identifier: 'no-such-user' },
        status: 200,
        contains: { status: true },
      },
      {
        name: 'an identifier of a wrong type',
        method: 'POST',
        path: '/api/auth/request-password-reset',
        body: { identifier: 42 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )

  it('answers 200 { status: true } on an install without an email channel', async () => {
    const noMailOwner = await signUpOwner(noMail)
    const reply = await noMail.request('POST', '/api/auth/request-password-reset', {
      body: { email: noMailOwner.email },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ status: true })
    const magic = await noMail.request('POST', '/api/auth/magic-link', { body: { email: noMailOwner.email } })
    expect(magic.status, magic.text).toBe(200)
    expect(magic.body).toEqual({ status: true })
    const health = await noMail.request('GET', '/health')
    expect(health.body.email_capabilities.channel).toBe('email_no_channel')
  })
})

describe('POST /api/auth/reset-password', () => {
  it('sets the new password: { status: true }, the old one fails, the new one works, old sessions end', async () => {
    const account = await createAccount(server, owner.token, { role: 'editor' })
    const other = await signIn(account.email, account.password)
    expect((await getSession(account.token)).status).toBe(200)
    const token = await resetToken(account.email)
    const reply = await post('/api/auth/reset-password', { token, password: 'the new password' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ status: true })
    expect((await signIn(account.email, account.password)).status).toBe(401)
    const fresh = await signIn(account.email, 'the new password')
    expect(fresh.status, fresh.text).toBe(200)
    expect(fresh.body.user).toMatchObject({ id: account.id, role: 'editor' })
    expect((await getSession(account.token)).status).toBe(401)
    expect((await getSession(other.body.token)).status).toBe(401)
    expect((await getSession(fresh.body.token)).status).toBe(200)
  })

  it('works once: the second use of a token is 400 invalid_request and changes nothing', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const token = await resetToken(account.email)
    expect((await post('/api/auth/reset-password', { token, password: 'first new password' })).status).toBe(200)
    const again = await post('/api/auth/reset-password', { token, password: 'second new password' })
    expect(again.status, again.text).toBe(400)
    expect(again.body.error).toBe('invalid_request')
    expect((await signIn(account.email, 'second new password')).status).toBe(401)
    expect((await signIn(account.email, 'first new password')).status).toBe(200)
  })

  it('keeps the token when the new password is refused, so the person can try again', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const token = await resetToken(account.email)
    const short = await post('/api/auth/reset-password', { token, password: 'short' })
    expect(short.status, short.text).toBe(400)
    expect(short.body.error).toBe('invalid_request')
    expect((await signIn(account.email, account.password)).status).toBe(200)
    expect((await post('/api/auth/reset-password', { token, password: 'long enough now' })).status).toBe(200)
  })

  it('refuses the token of an account deleted since with 400 invalid_request', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const link = await post(`/api/v1/users/${account.id}/reset-link`, undefined, owner.token)
    expect((await server.request('DELETE', `/api/v1/users/${account.id}`, { token: owner.token })).status).toBe(200)
    const token = new URL(link.body.url).searchParams.get('token')!
    const reply = await post('/api/auth/reset-password', { token, password: 'a good password' })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
  })

  it('does not take a magic-link token', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const mail = await mailFrom(() => post('/api/auth/magic-link', { email: account.email }), account.email)
    const token = linkIn(mail, '/api/auth/magic-link/verify').searchParams.get('token')!
    const reply = await post('/api/auth/reset-password', { token, password: 'sneaky new password' })
    expect(reply.status).toBe(400)
    expect((await signIn(account.email, account.password)).status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'a bogus token',
        method: 'POST',
        path: '/api/auth/reset-password',
        body: { token: 'bogus-token', password: 'a good password' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an overlong token',
        method: 'POST',
        path: '/api/auth/reset-password',
        body: { token: 'x'.repeat(201), password: 'a good password' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an empty token',
        method: 'POST',
        path: '/api/auth/reset-password',
        body: { token: '', password: 'a good password' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a missing password',
        method: 'POST',
        path: '/api/auth/reset-password',
        body: { token: 'bogus-token' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'the form page a mailed link opens',
        method: 'GET',
        path: '/api/auth/reset-password?token=abc',
        status: 200,
        responseHeaders: {
          'content-type': /^text\/html/,
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        },
      },
    ],
  )
})

describe('a new password spends every outstanding link of the account (decision 013)', () => {
  const reset = (token: string, password: string) => post('/api/auth/reset-password', { token, password })
  const adminLink = async (userId: string) => {
    const reply = await post(`/api/v1/users/${userId}/reset-link`, undefined, owner.token)
    expect(reply.status, reply.text).toBe(200)
    return new URL(reply.body.url).searchParams.get('token')!
  }
  const magicToken = async (email: string) => {
    const mail = await mailFrom(() => post('/api/auth/magic-link', { email }), email)
    return linkIn(mail, '/api/auth/magic-link/verify').searchParams.get('token')!
  }
  const verifyMagic = (token: string) =>
    server.request('GET', `/api/auth/magic-link/verify?token=${encodeURIComponent(token)}`)
  const expectSpent = (reply: { status: number; text: string; body: any }) => {
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect(reply.body.token).toBeUndefined()
  }

  it('a reset with one mailed link spends the other mailed links: B is 400 and changes nothing', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const a = await resetToken(account.email)
    const b = await resetToken(account.email)
    expect((await reset(a, 'set with link A')).status).toBe(200)
    expectSpent(await reset(b, 'set with link B'))
    expect((await signIn(account.email, 'set with link B')).status).toBe(401)
    expect((await signIn(account.email, 'set with link A')).status).toBe(200)
  })

  it('mailed and administrator-issued links spend each other, whichever is used', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const issued = await adminLink(account.id)
    const mailed = await resetToken(account.email)
    expect((await reset(mailed, 'set by the mailed link')).status).toBe(200)
    expectSpent(await reset(issued, 'set by the issued link'))

    const mailedAgain = await resetToken(account.email)
    const issuedAgain = await adminLink(account.id)
    expect((await reset(issuedAgain, 'set by the second issued link')).status).toBe(200)
    expectSpent(await reset(mailedAgain, 'set by the second mailed link'))
    expect((await signIn(account.email, 'set by the second issued link')).status).toBe(200)
  })

  it('a reset spends an outstanding magic link: it signs nobody in', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const magic = await magicToken(account.email)
    expect((await reset(await resetToken(account.email), 'after a compromise')).status).toBe(200)
    expectSpent(await verifyMagic(magic))
  })

  it('a reset leaves links of other accounts alone', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const other = await createAccount(server, owner.token, { role: 'viewer' })
    const othersLink = await resetToken(other.email)
    const othersMagic = await magicToken(other.email)
    expect((await reset(await resetToken(account.email), 'only mine')).status).toBe(200)
    expect((await verifyMagic(othersMagic)).status).toBe(200)
    expect((await reset(othersLink, 'still theirs to set')).status).toBe(200)
  })

  it('PATCH /users/:id with a password spends reset and magic links and ends the sessions; a name change spends nothing', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const mailed = await resetToken(account.email)
    const issued = await adminLink(account.id)
    const magic = await magicToken(account.email)

    const renamed = await server.request('PATCH', `/api/v1/users/${account.id}`, {
      token: owner.token,
      body: { name: 'Renamed' },
    })
    expect(renamed.status, renamed.text).toBe(200)
    expect((await getSession(account.token)).status).toBe(200)

    const changed = await server.request('PATCH', `/api/v1/users/${account.id}`, {
      token: owner.token,
      body: { password: 'set by the administrator' },
    })
    expect(changed.status, changed.text).toBe(200)
    expectSpent(await reset(mailed, 'set by the old mailed link'))
    expectSpent(await reset(issued, 'set by the old issued link'))
    expectSpent(await verifyMagic(magic))
    expect((await getSession(account.token)).status).toBe(401)
    expect((await signIn(account.email, 'set by the administrator')).status).toBe(200)
  })

  it("keeps the account's API keys working (they are revoked on their own), and the reset mail says so", async () => {
    const account = await createAccount(server, owner.token, { role: 'admin' })
    const key = await post(
      '/api/auth/api-keys',
      { label: 'deploy', capabilities: ['system/users:read'] },
      account.token,
    )
    expect(key.status, key.text).toBe(201)
    const mail = await mailFrom(() => requestReset({ email: account.email }), account.email)
    expect(mail.text).toContain('API keys')
    expect(mail.text).toContain('/api/auth/api-keys')
    const token = linkIn(mail, '/api/auth/reset-password').searchParams.get('token')!
    expect((await reset(token, 'a fresh password')).status).toBe(200)
    expect((await getSession(account.token)).status).toBe(401)
    const withKey = await server.request('GET', '/api/v1/users', { token: key.body.raw })
    expect(withKey.status, withKey.text).toBe(200)
  })
})

describe('POST /api/v1/users/:id/reset-link', () => {
  it('gives the owner a one-time { url, expiresAt } link valid for an hour, and audit-logs it', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await post(`/api/v1/users/${account.id}/reset-link`, undefined, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ url: expect.any(String), expiresAt: expect.any(Number) })
    expect(reply.headers.get('cache-control')).toBe('no-store')
    const now = Math.floor(Date.now() / 1000)
    expect(reply.body.expiresAt).toBeGreaterThan(now + 3600 - 300)
    expect(reply.body.expiresAt).toBeLessThanOrEqual(now + 3600 + 5)
    const url = new URL(reply.body.url)
    expect(`${url.origin}${url.pathname}`).toBe(`${publicUrl}/api/auth/reset-password`)
    const token = url.searchParams.get('token')!

    const log = await server.request('GET', '/api/v1/audit-log?action=user.recovery_link_issued', {
      token: owner.token,
    })
    expect(log.status).toBe(200)
    expect(log.body.data[0]).toMatchObject({
      action: 'user.recovery_link_issued',
      actor: { type: 'user', id: owner.id },
      target: { type: 'user', id: account.id },
    })
    // The audit log records that a link was issued, never the link.
    expect(log.text).not.toContain(token)

    expect((await post('/api/auth/reset-password', { token, password: 'set by the link' })).status).toBe(200)
    expect((await signIn(account.email, 'set by the link')).status).toBe(200)
    expect((await getSession(account.token)).status).toBe(401)
    expect((await post('/api/auth/reset-password', { token, password: 'set by the link again' })).status).toBe(400)
  })

  it('sends no mail: the administrator hands the link over', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await post(`/api/v1/users/${account.id}/reset-link`, undefined, owner.token)).status).toBe(200)
    expect(mailsTo(account.email)).toEqual([])
  })

  it('refuses a viewer with 403, and writes no audit entry', async () => {
    const viewer = await createAccount(server, owner.token, { role: 'viewer' })
    const target = await createAccount(server, owner.token, { role: 'viewer' })
    const before = (
      await server.request('GET', '/api/v1/audit-log?action=user.recovery_link_issued', { token: owner.token })
    ).body.total
    const reply = await post(`/api/v1/users/${target.id}/reset-link`, undefined, viewer.token)
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect(reply.text).not.toContain('reset-password')
    const after = (
      await server.request('GET', '/api/v1/audit-log?action=user.recovery_link_issued', { token: owner.token })
    ).body.total
    expect(after).toBe(before)
  })

  it('refuses an admin a link for the super_admin with 403', async () => {
    const admin = await createAccount(server, owner.token, { role: 'admin' })
    const reply = await post(`/api/v1/users/${owner.id}/reset-link`, undefined, admin.token)
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    // ... but an admin may issue one for an ordinary account.
    const viewer = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await post(`/api/v1/users/${viewer.id}/reset-link`, undefined, admin.token)).status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'an unknown user',
        method: 'POST',
        path: '/api/v1/users/00000000000000000000000000000000/reset-link',
        as: () => owner.token,
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'no credential',
        method: 'POST',
        path: '/api/v1/users/00000000000000000000000000000000/reset-link',
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )
})

describe('magic links', () => {
  const requestLink = (body: unknown) => post('/api/auth/magic-link', body)
  const verifyPath = (link: URL) => `${link.pathname}${link.search}`

  /** GET without following a redirect (the harness's fetch follows them), for the 302 answers. */
  async function visit(path: string): Promise<{ status: number; location: string | null; body: any }> {
    const res = await fetch(`${server.url}${path}`, { redirect: 'manual' })
    const text = await res.text()
    return { status: res.status, location: res.headers.get('location'), body: text ? JSON.parse(text) : undefined }
  }

  async function magicLink(email: string, callbackURL?: string): Promise<URL> {
    const mail = await mailFrom(() => requestLink(callbackURL ? { email, callbackURL } : { email }), email)
    return linkIn(mail, '/api/auth/magic-link/verify')
  }

  it('mails a /api/auth/magic-link/verify?token=… link that signs in once with { token, user }', async () => {
    const account = await createAccount(server, owner.token, { role: 'editor', name: 'Magda' })
    const reply = await requestLink({ email: account.email })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ status: true })
    const mail = await mailbox.waitFor((m) => m.to.includes(account.email))
    const link = linkIn(mail, '/api/auth/magic-link/verify')
    expect(link.origin).toBe(publicUrl)
    expect(link.searchParams.get('token')).toMatch(/^[\w-]{20,}$/)

    const signedIn = await server.request('GET', verifyPath(link))
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body).toEqual({
      token: expect.any(String),
      user: { id: account.id, email: account.email, name: 'Magda', role: 'editor' },
    })
    expect(signedIn.headers.get('cache-control')).toBe('no-store')
    expect((await getSession(signedIn.body.token)).body.user.id).toBe(account.id)

    const again = await server.request('GET', verifyPath(link))
    expect(again.status, again.text).toBe(400)
    expect(again.body.error).toBe('invalid_request')
  })

  it('answers { status: true } for an unknown email and sends nothing', async () => {
    const before = mailbox.messages.length
    const reply = await requestLink({ email: `${unique('nobody')}@example.com` })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ status: true })
    expect(mailbox.messages.length).toBe(before)
  })

  it('sends nothing for a contact email shared by several accounts', async () => {
    const shared = `${unique('shared')}@example.com`
    for (const username of [unique('one'), unique('two')]) {
      const created = await post(
        '/api/v1/users',
        { email: shared, username, password: 'shared password', name: username, role: 'viewer' },
        owner.token,
      )
      expect(created.status).toBe(201)
    }
    expect((await requestLink({ email: shared })).body).toEqual({ status: true })
    expect(mailsTo(shared)).toEqual([])
  })

  it('redirects to a trusted path callbackURL with #token=… in the fragment', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const link = await magicLink(account.email, '/app')
    const reply = await visit(verifyPath(link))
    expect(reply.status, JSON.stringify(reply.body)).toBe(302)
    const location = new URL(reply.location!)
    expect(`${location.origin}${location.pathname}`).toBe(`${publicUrl}/app`)
    expect(location.search).toBe('')
    const token = new URLSearchParams(location.hash.slice(1)).get('token')!
    expect((await getSession(token)).body.user.id).toBe(account.id)
  })

  it("redirects to a callbackURL on PUBLIC_URL's origin or a CORS origin", async () => {
    for (const callbackURL of [`${publicUrl}/signed-in`, `${appOrigin}/welcome`]) {
      const account = await createAccount(server, owner.token, { role: 'viewer' })
      const reply = await visit(verifyPath(await magicLink(account.email, callbackURL)))
      expect(reply.status, callbackURL).toBe(302)
      const location = reply.location!
      expect(location.startsWith(`${callbackURL}#token=`), location).toBe(true)
      expect((await getSession(new URLSearchParams(new URL(location).hash.slice(1)).get('token')!)).status).toBe(200)
    }
  })

  it('refuses an untrusted callbackURL with 400 invalid_request and mails nothing', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    for (const callbackURL of [
      'https://evil.example',
      'https://evil.example/app',
      '//evil.example/app',
      'javascript:alert(1)',
    ]) {
      const reply = await requestLink({ email: account.email, callbackURL })
      expect(reply.status, callbackURL).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
    expect(mailsTo(account.email)).toEqual([])
  })

  it('refuses an untrusted callbackURL added to the link, without using the link up', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const link = await magicLink(account.email)
    const tampered = new URL(link)
    tampered.searchParams.set('callbackURL', 'https://evil.example')
    const reply = await visit(verifyPath(tampered))
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect(reply.location).toBeNull()
    expect((await server.request('GET', verifyPath(link))).status).toBe(200)
  })

  it('needs the TOTP code of an account with two-factor: 403 mfa_required, and the link still works with the code', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const secret = (await post('/api/auth/totp/enroll', undefined, account.token)).body.secret as string
    const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
    expect((await post('/api/auth/totp/confirm', { code: totp.generate() }, account.token)).status).toBe(200)
    const link = await magicLink(account.email)
    const without = await server.request('GET', verifyPath(link))
    expect(without.status, without.text).toBe(403)
    expect(without.body.error).toBe('mfa_required')
    expect(without.text).not.toContain('"token"')
    const near = new Set([-90, -60, -30, 0, 30, 60, 90].map((s) => totp.generate({ timestamp: Date.now() + s * 1000 })))
    const wrong = new URL(link)
    wrong.searchParams.set(
      'code',
      ['000000', '111111', '222222', '333333', '444444', '555555', '666666', '777777'].find((c) => !near.has(c))!,
    )
    const mistyped = await server.request('GET', verifyPath(wrong))
    expect(mistyped.status, mistyped.text).toBe(401)
    expect(mistyped.body.error).toBe('unauthorized')
    const withCode = new URL(link)
    withCode.searchParams.set('code', totp.generate())
    const reply = await server.request('GET', verifyPath(withCode))
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.user.id).toBe(account.id)
  })

  it('refuses a banned account with 403 account_banned, and mails a banned account nothing', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const link = await magicLink(account.email)
    expect(
      (await server.request('PATCH', `/api/v1/users/${account.id}`, { token: owner.token, body: { banned: true } }))
        .status,
    ).toBe(200)
    const reply = await server.request('GET', verifyPath(link))
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('account_banned')
    const before = mailsTo(account.email).length
    expect((await requestLink({ email: account.email })).body).toEqual({ status: true })
    expect(mailsTo(account.email).length).toBe(before)
  })

  it('does not take a password-reset token', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const token = await resetToken(account.email)
    const reply = await server.request('GET', `/api/auth/magic-link/verify?token=${encodeURIComponent(token)}`)
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
  })

  runScenarios(
    () => server,
    [
      {
        name: 'a bogus token',
        method: 'GET',
        path: '/api/auth/magic-link/verify?token=bogus',
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no token',
        method: 'GET',
        path: '/api/auth/magic-link/verify',
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a malformed email',
        method: 'POST',
        path: '/api/auth/magic-link',
        body: { email: 'not-an-email' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no email',
        method: 'POST',
        path: '/api/auth/magic-link',
        body: {},
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})
