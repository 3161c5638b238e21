import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { startMailbox, type Mailbox } from '../support/mailbox.js'

// Every client of these tests is 127.0.0.1, so each limit scenario gets its own install.
let limited: TestServer
let limitedOwner: Account
let mailLimited: TestServer
let proxied: TestServer
let direct: TestServer
// Two-factor codes: behind a trusted proxy, so each attempt can come from a different client address.
let mailbox: Mailbox
let twoFactor: TestServer
let twoFactorOwnerToken: string
const member = { email: 'member@example.com', username: 'member', password: 'member password' }
let addresses = 0
/** A client address not used before in this file (TEST-NET-2). */
const nextAddress = () => `198.18.${Math.floor(++addresses / 250)}.${addresses % 250}`

beforeAll(async () => {
  mailbox = await startMailbox()
  ;[limited, mailLimited, proxied, direct, twoFactor] = await Promise.all([
    startServer({ AUTH_RATE_LIMIT: '5' }),
    startServer({ AUTH_RATE_LIMIT: '5' }),
    startServer({ AUTH_RATE_LIMIT: '5', TRUST_PROXY: 'true' }),
    startServer({ AUTH_RATE_LIMIT: '5' }),
    startServer({
      AUTH_RATE_LIMIT: '5',
      TRUST_PROXY: 'true',
      SMTP_URL: mailbox.url,
      PUBLIC_URL: 'https://plinth.example',
    }),
  ])
  const owner = await twoFactor.request('POST', '/api/auth/sign-up/email', {
    body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
    headers: { 'x-forwarded-for': nextAddress() },
  })
  expect(owner.status, owner.text).toBe(200)
  twoFactorOwnerToken = owner.body.token
  // The owner's sign-up is the first of the five attempts 127.0.0.1 has on `limited`.
  limitedOwner = await signUpOwner(limited)
  const settings = await limited.request('PATCH', '/api/v1/settings', {
    token: limitedOwner.token,
    body: { 'auth.usernameEnabled': true },
  })
  expect(settings.status, settings.text).toBe(200)
  const created = await limited.request('POST', '/api/v1/users', {
    token: limitedOwner.token,
    body: { ...member, name: 'Member', role: 'viewer' },
  })
  expect(created.status, created.text).toBe(201)
})
afterAll(async () => {
  await Promise.all([limited?.stop(), mailLimited?.stop(), proxied?.stop(), direct?.stop(), twoFactor?.stop()])
  await mailbox?.close()
})

function expectRateLimited(reply: Reply): void {
  expect(reply.status, reply.text).toBe(429)
  expect(reply.body).toEqual({ error: 'rate_limited', message: expect.any(String), details: expect.any(Object) })
  const retryAfter = reply.headers.get('retry-after')
  expect(retryAfter).toMatch(/^\d+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(Number(retryAfter)).toBeLessThanOrEqual(60)
  expect(reply.text).not.toContain('"token"')
}

const available = (s: TestServer, username: string, headers?: Record<string, string>) =>
  s.request('POST', '/api/auth/is-username-available', { body: { username }, headers })

describe('the auth rate limit (AUTH_RATE_LIMIT=5)', () => {
  it('is shared by sign-up, email and username sign-in and is-username-available; the 6th attempt is 429 with Retry-After', async () => {
    // Attempt 1 was the owner's sign-up. Attempts 2-5, failures included:
    expect(
      (
        await limited.request('POST', '/api/auth/sign-in/email', {
          body: { email: member.email, password: member.password },
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await limited.request('POST', '/api/auth/sign-in/username', {
          body: { username: member.username, password: member.password },
        })
      ).status,
    ).toBe(200)
    expect((await available(limited, 'somebody')).status).toBe(200)
    expect(
      (
        await limited.request('POST', '/api/auth/sign-in/email', {
          body: { email: member.email, password: 'wrong password' },
        })
      ).status,
    ).toBe(401)

    // Past the limit, every one of them is refused, right credentials or not.
    expectRateLimited(
      await limited.request('POST', '/api/auth/sign-in/email', {
        body: { email: member.email, password: member.password },
      }),
    )
    expectRateLimited(
      await limited.request('POST', '/api/auth/sign-in/username', {
        body: { username: member.username, password: member.password },
      }),
    )
    expectRateLimited(await available(limited, 'somebody'))
    expectRateLimited(
      await limited.request('POST', '/api/auth/sign-up/email', {
        body: { email: 'late@example.com', password: 'a good password', name: 'Late' },
      }),
    )

    // Nothing else is limited: existing sessions work, and so do mail requests (their own bucket).
    expect((await limited.request('GET', '/api/auth/get-session', { token: limitedOwner.token })).status).toBe(200)
    expect((await limited.request('GET', '/api/auth/capabilities')).status).toBe(200)
    expect(
      (await limited.request('POST', '/api/auth/request-password-reset', { body: { email: member.email } })).status,
    ).toBe(200)
  })

  it('counts reset and magic-link requests in a bucket of their own', async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await mailLimited.request('POST', '/api/auth/request-password-reset', {
            body: { email: `nobody${i}@example.com` },
          })
        ).status,
      ).toBe(200)
    }
    for (let i = 0; i < 2; i++) {
      expect(
        (await mailLimited.request('POST', '/api/auth/magic-link', { body: { email: `nobody${i}@example.com` } }))
          .status,
      ).toBe(200)
    }
    expectRateLimited(
      await mailLimited.request('POST', '/api/auth/request-password-reset', { body: { email: 'nobody@example.com' } }),
    )
    expectRateLimited(
      await mailLimited.request('POST', '/api/auth/magic-link', { body: { email: 'nobody@example.com' } }),
    )
    // The sign-in bucket is untouched: the first sign-up still goes through.
    expect(
      (
        await mailLimited.request('POST', '/api/auth/sign-up/email', {
          body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
        })
      ).status,
    ).toBe(200)
  })
})

describe('client addresses', () => {
  it('with TRUST_PROXY, different X-Forwarded-For addresses are different clients', async () => {
    const a = { 'x-forwarded-for': '203.0.113.1' }
    for (let i = 0; i < 5; i++) expect((await available(proxied, 'someone', a)).status).toBe(200)
    expectRateLimited(await available(proxied, 'someone', a))
    expect((await available(proxied, 'someone', { 'x-forwarded-for': '203.0.113.2' })).status).toBe(200)
    // The proxy's own address (no header) is yet another client.
    expect((await available(proxied, 'someone')).status).toBe(200)
  })

  it('with TRUST_PROXY, only the address the proxy appended counts, not what the client put before it', async () => {
    const client = '198.51.100.7'
    for (let i = 0; i < 5; i++) {
      // A client forging a fresh first entry each time is still the same client.
      expect((await available(proxied, 'someone', { 'x-forwarded-for': `10.0.0.${i}, ${client}` })).status).toBe(200)
    }
    expectRateLimited(await available(proxied, 'someone', { 'x-forwarded-for': `10.0.0.99, ${client}` }))
    expectRateLimited(await available(proxied, 'someone', { 'x-forwarded-for': client }))
  })

  it('without TRUST_PROXY, X-Forwarded-For is ignored', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await available(direct, 'someone', { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(200)
    }
    expectRateLimited(await available(direct, 'someone', { 'x-forwarded-for': '203.0.113.200' }))
    expectRateLimited(await available(direct, 'someone'))
  })
})

describe('two-factor codes', () => {
  const authenticator = (secret: string) =>
    new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
  function wrongCodeOf(secret: string): string {
    const near = new Set(
      [-90, -60, -30, 0, 30, 60, 90].map((s) => authenticator(secret).generate({ timestamp: Date.now() + s * 1000 })),
    )
    return ['000000', '111111', '222222', '333333', '444444', '555555', '666666', '777777', '888888'].find(
      (c) => !near.has(c),
    )!
  }
  let counter = 0
  const from = () => ({ 'x-forwarded-for': nextAddress() })

  /** An account with two-factor on, and a session of it; every request from a fresh client address. */
  async function enrolled() {
    const email = `mfa${++counter}@example.com`
    const password = 'a good password'
    const created = await twoFactor.request('POST', '/api/v1/users', {
      token: twoFactorOwnerToken,
      body: { email, password, name: 'Mfa', role: 'viewer' },
    })
    expect(created.status, created.text).toBe(201)
    const signedIn = await twoFactor.request('POST', '/api/auth/sign-in/email', {
      body: { email, password },
      headers: from(),
    })
    expect(signedIn.status, signedIn.text).toBe(200)
    const token = signedIn.body.token as string
    const secret = (await twoFactor.request('POST', '/api/auth/totp/enroll', { token })).body.secret as string
    expect(
      (
        await twoFactor.request('POST', '/api/auth/totp/confirm', {
          token,
          body: { code: authenticator(secret).generate() },
        })
      ).status,
    ).toBe(200)
    return { email, password, token, secret }
  }

  it('are limited per account: wrong codes from five addresses use up the sixth, right code or not', async () => {
    const account = await enrolled()
    const signIn = (code: string) =>
      twoFactor.request('POST', '/api/auth/sign-in/email', {
        body: { email: account.email, password: account.password, code },
        headers: from(),
      })
    for (let i = 0; i < 5; i++) expect((await signIn(wrongCodeOf(account.secret))).status).toBe(401)
    expectRateLimited(await signIn(authenticator(account.secret).generate()))
    // Another account is not held back.
    const other = await enrolled()
    const reply = await twoFactor.request('POST', '/api/auth/sign-in/email', {
      body: { email: other.email, password: other.password, code: authenticator(other.secret).generate() },
      headers: from(),
    })
    expect(reply.status, reply.text).toBe(200)
  })

  it('cannot be guessed without end through a magic link, which survives wrong codes', async () => {
    const account = await enrolled()
    const before = mailbox.messages.length
    expect(
      (await twoFactor.request('POST', '/api/auth/magic-link', { body: { email: account.email }, headers: from() }))
        .status,
    ).toBe(200)
    const mail = mailbox.messages.slice(before).find((m) => m.to.includes(account.email))!
    const link = new URL(/https:\/\/plinth\.example\/api\/auth\/magic-link\/verify\S*/.exec(mail.text)![0])
    const verify = (code: string) => {
      const url = new URL(link)
      url.searchParams.set('code', code)
      return twoFactor.request('GET', `${url.pathname}${url.search}`, { headers: from() })
    }
    for (let i = 0; i < 5; i++) {
      const reply = await verify(wrongCodeOf(account.secret))
      expect(reply.status, reply.text).toBe(401)
      expect(reply.body.error).toBe('unauthorized')
    }
    expectRateLimited(await verify(authenticator(account.secret).generate()))
  })

  it('are limited when turning two-factor off too', async () => {
    const account = await enrolled()
    const disable = (code: string) =>
      twoFactor.request('POST', '/api/auth/totp/disable', { token: account.token, body: { code } })
    for (let i = 0; i < 5; i++) expect((await disable(wrongCodeOf(account.secret))).status).toBe(401)
    expectRateLimited(await disable(authenticator(account.secret).generate()))
    const signIn = await twoFactor.request('POST', '/api/auth/sign-in/email', {
      body: { email: account.email, password: account.password },
      headers: from(),
    })
    expect(signIn.body.error).toBe('mfa_required')
  })
})
