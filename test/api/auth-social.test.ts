import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOAuth, type FakeOAuth, type GitHubUser, type GoogleUser } from '../support/fake-oauth.js'
import { send, startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants } from '../support/identity.js'

type Provider = 'github' | 'google'

let fake: FakeOAuth
let server: TestServer
/** The app's PUBLIC_URL: the harness makes it the real listening address. */
let PUBLIC_URL: string
let ownerToken: string
/** Every credential the flows produced, for the log check at the end. */
const issued = { sessionTokens: [] as string[], mfaTokens: [] as string[] }

beforeAll(async () => {
  fake = await startFakeOAuth()
  server = await startServer(fake.env())
  PUBLIC_URL = server.app.config.publicUrl
  fake.registerApp(PUBLIC_URL)
})
afterAll(async () => {
  await server?.stop()
  await fake?.close()
})

let seq = 0
function githubUser(email: string, options: { verified?: boolean; name?: string | null } = {}): GitHubUser {
  const id = 5_000_000 + ++seq
  return {
    id,
    login: `octo${id}`,
    name: options.name === undefined ? `Octo ${id}` : options.name,
    emails: [{ email, primary: true, verified: options.verified ?? true }],
  }
}
function googleUser(email: string, options: { verified?: boolean } = {}): GoogleUser {
  return {
    sub: `1098${String(++seq).padStart(17, '0')}`,
    email,
    email_verified: options.verified ?? true,
    name: `Goo ${seq}`,
  }
}

/** A redirect back to Plinth: it must point at PUBLIC_URL, which is where the test server listens. */
function onPlinth(url: URL): string {
  expect(url.origin).toBe(new URL(PUBLIC_URL).origin)
  return url.toString()
}

function location(res: Response): URL {
  const value = res.headers.get('location')
  expect(value, `status ${res.status} without Location`).toBeTruthy()
  return new URL(value!)
}

/** The cookie Plinth set at the start of an attempt, as the browser would send it back (`name=value`). */
function cookieOf(res: Response): string {
  const value = res.headers.get('set-cookie')
  expect(value, 'the start sets the browser-binding cookie').toBeTruthy()
  return value!.split(';')[0]!
}

function startUrl(srv: TestServer, provider: string, callbackURL: string): string {
  return `${srv.url}/api/auth/sign-in/social?provider=${encodeURIComponent(provider)}&callbackURL=${encodeURIComponent(callbackURL)}`
}

/**
 * The browser's round trip, one redirect at a time: Plinth's start → the provider's authorize page → back
 * to Plinth's callback → the app's callback URL. Returns each hop for the test to inspect.
 */
async function socialSignIn(provider: Provider, callbackURL = '/app') {
  const start = await fetch(startUrl(server, provider, callbackURL), { redirect: 'manual' })
  expect(start.status, await start.clone().text()).toBe(302)
  const authorizeUrl = location(start)
  const cookie = cookieOf(start)
  const atProvider = await fetch(authorizeUrl, { redirect: 'manual' })
  expect(atProvider.status, await atProvider.clone().text()).toBe(302)
  const back = location(atProvider)
  expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC_URL}/api/auth/callback/${provider}`)
  const callback = await fetch(onPlinth(back), { redirect: 'manual', headers: { cookie } })
  expect(callback.status, await callback.clone().text()).toBe(302)
  const landing = location(callback)
  const fragment = new URLSearchParams(landing.hash.replace(/^#/, ''))
  const token = fragment.get('token')
  if (token) issued.sessionTokens.push(token)
  const mfaToken = fragment.get('mfa_token')
  if (mfaToken) issued.mfaTokens.push(mfaToken)
  return { authorizeUrl, back, callback, landing, fragment, cookie }
}

async function session(token: string) {
  return server.request('GET', '/api/auth/get-session', { token })
}

async function usersWithEmail(email: string): Promise<{ id: string; role: string }[]> {
  const reply = await server.request('GET', '/api/v1/users?limit=100', { token: ownerToken })
  expect(reply.status, reply.text).toBe(200)
  return (reply.body.data as { id: string; email: string | null; role: string }[]).filter(
    (u) => u.email === email.toLowerCase(),
  )
}

function totpCode(secret: string, offsetSteps = 0): string {
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
  return totp.generate({ timestamp: Date.now() + offsetSteps * 30_000 })
}

/** A code that is valid in none of the steps the server accepts (now and one either side). */
function wrongTotpCode(secret: string): string {
  const valid = new Set([-1, 0, 1].map((o) => totpCode(secret, o)))
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0')
    if (!valid.has(candidate)) return candidate
  }
}

describe('social sign-in: configuration', () => {
  it('GET /api/auth/capabilities shows both providers as configured', async () => {
    const reply = await server.request('GET', '/api/auth/capabilities')
    expect(reply.status).toBe(200)
    expect(reply.body.socialProviders).toEqual({ github: true, google: true })
  })

  it('an unknown provider is refused with 400 invalid_request', async () => {
    for (const path of [
      '/api/auth/sign-in/social?provider=gitlab&callbackURL=/app',
      '/api/auth/callback/gitlab?code=x&state=y',
    ]) {
      const reply = await server.request('GET', path)
      expect(reply.status, path).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
  })

  it('a provider without client id and secret is not offered and refused with 400', async () => {
    const githubOnly = await startServer(pick(fake.env(), 'GITHUB_'))
    try {
      const caps = await githubOnly.request('GET', '/api/auth/capabilities')
      expect(caps.body.socialProviders).toEqual({ github: true, google: false })
      const start = await fetch(startUrl(githubOnly, 'google', '/app'), { redirect: 'manual' })
      expect(start.status).toBe(400)
      expect(await start.json()).toMatchObject({ error: 'invalid_request' })
      const callback = await githubOnly.request('GET', '/api/auth/callback/google?code=abc&state=def')
      expect(callback.status).toBe(400)
      expect(callback.body.error).toBe('invalid_request')
      // The configured one still starts.
      const github = await fetch(startUrl(githubOnly, 'github', '/app'), { redirect: 'manual' })
      expect(github.status).toBe(302)
    } finally {
      await githubOnly.stop()
    }
  })

  it('an untrusted callbackURL is refused with 400 before anyone is sent to the provider', async () => {
    const otherPort = new URL(PUBLIC_URL)
    otherPort.port = String(Number(otherPort.port) === 1 ? 2 : 1)
    for (const callbackURL of [
      'https://evil.example/x',
      '//evil.example/x',
      'javascript:alert(1)',
      `${otherPort.origin}/app`,
    ]) {
      const res = await fetch(startUrl(server, 'github', callbackURL), { redirect: 'manual' })
      expect(res.status, callbackURL).toBe(400)
      expect(res.headers.get('location'), callbackURL).toBeNull()
      expect(await res.json()).toMatchObject({ error: 'invalid_request' })
    }
    const trusted = await fetch(startUrl(server, 'github', `${PUBLIC_URL}/elsewhere?x=1`), { redirect: 'manual' })
    expect(trusted.status).toBe(302)
  })
})

describe('social sign-in: accounts', () => {
  const owner = githubUser('Founder@Example.com', { name: null })

  it('GitHub: the redirect carries state and an S256 challenge; the first-ever social sign-in becomes the owner', async () => {
    fake.github.signIn(owner)
    const refusalsBefore = fake.refusals.length
    const { authorizeUrl, callback, landing, fragment } = await socialSignIn('github', '/app')

    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(`${fake.url}/github/login/oauth/authorize`)
    const q = authorizeUrl.searchParams
    expect(q.get('client_id')).toBe(fake.github.clientId)
    expect(q.get('redirect_uri')).toBe(`${PUBLIC_URL}/api/auth/callback/github`)
    expect(q.get('response_type')).toBe('code')
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{32,}$/)
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(q.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['user:email']))

    // The provider refused nothing: the code was exchanged with the right client, redirect URI and verifier.
    expect(fake.refusals.slice(refusalsBefore)).toEqual([])
    expect(callback.headers.get('cache-control')).toBe('no-store')
    expect(`${landing.origin}${landing.pathname}`).toBe(`${PUBLIC_URL}/app`)
    expect([...fragment.keys()]).toEqual(['token'])

    const me = await session(fragment.get('token')!)
    expect(me.status, me.text).toBe(200)
    expect(me.body.user).toMatchObject({ email: 'founder@example.com', role: 'super_admin', name: owner.login })
    ownerToken = fragment.get('token')!
  })

  it('the same provider account signs in again to the same user, with a new session', async () => {
    const first = await session(ownerToken)
    fake.github.signIn(owner)
    const { fragment } = await socialSignIn('github')
    const token = fragment.get('token')!
    expect(token).toBeTruthy()
    expect(token).not.toBe(ownerToken)
    const again = await session(token)
    expect(again.status).toBe(200)
    expect(again.body.user.id).toBe(first.body.user.id)
    expect(again.body.session.id).not.toBe(first.body.session.id)
    expect(await usersWithEmail('founder@example.com')).toHaveLength(1)
  })

  it('a second new person is refused while sign-up is closed: #error=signup_forbidden, no account', async () => {
    await setGrants(server, ownerToken, 'public', [])
    const stranger = githubUser('stranger@example.com')
    fake.github.signIn(stranger)
    const { landing, fragment } = await socialSignIn('github', '/app')
    expect(`${landing.origin}${landing.pathname}`).toBe(`${PUBLIC_URL}/app`)
    expect(fragment.get('error')).toBe('signup_forbidden')
    expect(fragment.get('token')).toBeNull()
    expect(await usersWithEmail('stranger@example.com')).toEqual([])
  })

  it('a new person is accepted as viewer once the public role holds system/users:create', async () => {
    await setGrants(server, ownerToken, 'public', [{ resource: 'system/users', action: 'create' }])
    const newcomer = googleUser('newcomer@example.com')
    fake.google.signIn(newcomer)
    const { authorizeUrl, fragment } = await socialSignIn('google', '/welcome')
    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(`${fake.url}/google/o/oauth2/v2/auth`)
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorizeUrl.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'email']))
    const me = await session(fragment.get('token')!)
    expect(me.status, me.text).toBe(200)
    expect(me.body.user).toMatchObject({ email: 'newcomer@example.com', role: 'viewer', name: newcomer.name })
    expect(await usersWithEmail('newcomer@example.com')).toHaveLength(1)
  })

  it('an existing account with the same verified email is linked, not duplicated, from either provider', async () => {
    await setGrants(server, ownerToken, 'public', [{ resource: 'system/users', action: 'create' }])
    const dana = await createAccount(server, ownerToken, { role: 'editor', email: 'dana@example.com' })

    fake.google.signIn(googleUser('Dana@Example.com'))
    const viaGoogle = await socialSignIn('google')
    const me = await session(viaGoogle.fragment.get('token')!)
    expect(me.status, me.text).toBe(200)
    expect(me.body.user).toMatchObject({ id: dana.id, role: 'editor' })

    fake.github.signIn(githubUser('dana@example.com'))
    const viaGitHub = await socialSignIn('github')
    expect((await session(viaGitHub.fragment.get('token')!)).body.user.id).toBe(dana.id)
    expect(await usersWithEmail('dana@example.com')).toEqual([expect.objectContaining({ id: dana.id })])

    // An administrator made this account, vouching for its address: linking changed nothing else.
    const password = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: dana.email, password: dana.password },
    })
    expect(password.status).toBe(200)
  })

  it('linking to a self-registered account whose email was never proven discards its password and sessions (pre-registration)', async () => {
    await setGrants(server, ownerToken, 'public', [{ resource: 'system/users', action: 'create' }])
    // Someone registers the victim's address with a password of their own…
    const squat = await server.request('POST', '/api/auth/sign-up/email', {
      body: { email: 'squatted@example.com', password: 'attacker password', name: 'Victim' },
    })
    expect(squat.status, squat.text).toBe(200)
    // …and the real owner later arrives through a provider that vouches for the address.
    fake.google.signIn(googleUser('squatted@example.com'))
    const viaGoogle = await socialSignIn('google')
    const me = await session(viaGoogle.fragment.get('token')!)
    expect(me.status, me.text).toBe(200)
    expect(me.body.user.id).toBe(squat.body.user.id)
    // The squatter's password and session are gone.
    const password = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: 'squatted@example.com', password: 'attacker password' },
    })
    expect(password.status).toBe(401)
    expect((await session(squat.body.token)).status).toBe(401)
    // A second provider sign-in keeps the (now proven) account as it is.
    const again = await socialSignIn('google')
    expect((await session(again.fragment.get('token')!)).body.user.id).toBe(squat.body.user.id)
  })

  it('an account whose email was proven by a reset link keeps its password when a provider is linked', async () => {
    // A magic-link or reset proves the inbox; simulated through the admin's reset link here.
    await setGrants(server, ownerToken, 'public', [{ resource: 'system/users', action: 'create' }])
    const signUp = await server.request('POST', '/api/auth/sign-up/email', {
      body: { email: 'proven@example.com', password: 'first password', name: 'P' },
    })
    const link = await server.request('POST', `/api/v1/users/${signUp.body.user.id}/reset-link`, { token: ownerToken })
    const token = new URL(link.body.url).searchParams.get('token')!
    expect(
      (await server.request('POST', '/api/auth/reset-password', { body: { token, password: 'second password' } }))
        .status,
    ).toBe(200)
    fake.github.signIn(githubUser('proven@example.com'))
    const viaGitHub = await socialSignIn('github')
    expect((await session(viaGitHub.fragment.get('token')!)).body.user.id).toBe(signUp.body.user.id)
    const password = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: 'proven@example.com', password: 'second password' },
    })
    expect(password.status).toBe(200)
  })

  it('a banned account is sent back with #error=account_banned', async () => {
    const person = githubUser('banned-later@example.com')
    fake.github.signIn(person)
    const first = await socialSignIn('github')
    const id = (await session(first.fragment.get('token')!)).body.user.id as string
    const ban = await server.request('PATCH', `/api/v1/users/${id}`, { token: ownerToken, body: { banned: true } })
    expect(ban.status, ban.text).toBe(200)
    const second = await socialSignIn('github')
    expect(second.fragment.get('error')).toBe('account_banned')
    expect(second.fragment.get('token')).toBeNull()
  })
})

describe('social sign-in: refusals', () => {
  beforeAll(async () => {
    // Sign-up is open here, so an account that is not created was refused for its own reason.
    await setGrants(server, ownerToken, 'public', [{ resource: 'system/users', action: 'create' }])
  })

  it('a replayed state is refused with 400 invalid_request', async () => {
    fake.github.signIn(githubUser('replay@example.com'))
    const { back, fragment, cookie } = await socialSignIn('github')
    expect(fragment.get('token')).toBeTruthy()
    const replay = await fetch(onPlinth(back), { redirect: 'manual', headers: { cookie } })
    expect(replay.status).toBe(400)
    expect(replay.headers.get('location')).toBeNull()
    expect(await replay.json()).toMatchObject({ error: 'invalid_request' })
  })

  it('an unknown or missing state is refused with 400 invalid_request', async () => {
    for (const query of [
      '?code=abc&state=not-a-state-we-issued',
      '?code=abc',
      `?code=abc&state=${'x'.repeat(200)}`,
      '?error=access_denied',
    ]) {
      const reply = await server.request('GET', `/api/auth/callback/github${query}`)
      expect(reply.status, query).toBe(400)
      expect(reply.body.error, query).toBe('invalid_request')
      expect(reply.headers.get('location'), query).toBeNull()
    }
  })

  it("a state issued for one provider is refused on the other's callback", async () => {
    fake.github.signIn(githubUser('crossed@example.com'))
    const start = await fetch(startUrl(server, 'github', '/app'), { redirect: 'manual' })
    const atProvider = await fetch(location(start), { redirect: 'manual' })
    const back = location(atProvider)
    const crossed = await server.request('GET', `/api/auth/callback/google${back.search}`, {
      headers: { cookie: cookieOf(start) },
    })
    expect(crossed.status).toBe(400)
    expect(crossed.body.error).toBe('invalid_request')
    expect(crossed.headers.get('location')).toBeNull()

    fake.google.signIn(googleUser('crossed2@example.com'))
    const googleStart = await fetch(startUrl(server, 'google', '/app'), { redirect: 'manual' })
    const googleState = location(googleStart).searchParams.get('state')!
    const other = await server.request(
      'GET',
      `/api/auth/callback/github?code=abc&state=${encodeURIComponent(googleState)}`,
      {
        headers: { cookie: cookieOf(googleStart) },
      },
    )
    expect(other.status).toBe(400)
  })

  it('only the browser that started an attempt can finish it (login CSRF), and it still can afterwards', async () => {
    fake.github.signIn(githubUser('csrf@example.com'))
    const start = await fetch(startUrl(server, 'github', '/app'), { redirect: 'manual' })
    const back = location(await fetch(location(start), { redirect: 'manual' }))
    // A victim's browser sent to the attacker's callback URL has no cookie, or another attempt's.
    const other = await fetch(startUrl(server, 'github', '/app'), { redirect: 'manual' })
    for (const headers of [{}, { cookie: cookieOf(other) }, { cookie: 'plinth_oauth=forged' }] as Record<
      string,
      string
    >[]) {
      const victim = await fetch(onPlinth(back), { redirect: 'manual', headers })
      expect(victim.status).toBe(400)
      expect(victim.headers.get('location')).toBeNull()
      expect(await victim.json()).toMatchObject({ error: 'invalid_request' })
    }
    const owner = await fetch(onPlinth(back), { redirect: 'manual', headers: { cookie: cookieOf(start) } })
    expect(owner.status).toBe(302)
    expect(new URLSearchParams(location(owner).hash.slice(1)).get('token')).toBeTruthy()
  })

  it('the binding cookie is HttpOnly, SameSite=Lax and scoped to the callback path', async () => {
    const start = await fetch(startUrl(server, 'github', '/app'), { redirect: 'manual' })
    const cookie = start.headers.get('set-cookie')!
    expect(cookie).toMatch(/^plinth_oauth=[\w-]{43};/)
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/SameSite=Lax/i)
    expect(cookie).toMatch(/Path=\/api\/auth\/callback/)
  })

  for (const provider of ['github', 'google'] as const) {
    it(`${provider}: a code_verifier that does not match the challenge gets no session (#error=…)`, async () => {
      const email = `pkce-${provider}@example.com`
      if (provider === 'github') fake.github.signIn(githubUser(email))
      else fake.google.signIn(googleUser(email))
      fake[provider].tamperNextChallenge()
      const before = fake.refusals.length
      const { landing, fragment } = await socialSignIn(provider)
      expect(`${landing.origin}${landing.pathname}`).toBe(`${PUBLIC_URL}/app`)
      expect(fragment.get('token')).toBeNull()
      expect(fragment.get('error')).toBe('provider_error')
      // The refusal came from the provider's PKCE check, not from anything else.
      expect(fake.refusals.slice(before)).toEqual([
        {
          provider,
          endpoint: 'token',
          error: 'invalid_grant',
          description: 'code_verifier does not match the code_challenge',
        },
      ])
      expect(await usersWithEmail(email)).toEqual([])
    })
  }

  it('a person who refuses consent at the provider comes back with #error=access_denied and no session', async () => {
    fake.github.signIn(githubUser('refuser@example.com'))
    fake.github.denyNext()
    const { back, landing, fragment } = await socialSignIn('github', '/app')
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(`${landing.origin}${landing.pathname}`).toBe(`${PUBLIC_URL}/app`)
    expect(fragment.get('error')).toBe('access_denied')
    expect(fragment.get('token')).toBeNull()
    expect(await usersWithEmail('refuser@example.com')).toEqual([])
  })

  it('GitHub: a primary email that is not verified gets an error and no account', async () => {
    fake.github.signIn(githubUser('unverified-gh@example.com', { verified: false }))
    const { fragment } = await socialSignIn('github')
    expect(fragment.get('token')).toBeNull()
    expect(fragment.get('error')).toBeTruthy()
    expect(await usersWithEmail('unverified-gh@example.com')).toEqual([])
  })

  it('GitHub: an unverified email does not take over an existing account with that address', async () => {
    const victim = await createAccount(server, ownerToken, { role: 'viewer', email: 'victim@example.com' })
    fake.github.signIn(githubUser('victim@example.com', { verified: false }))
    const { fragment } = await socialSignIn('github')
    expect(fragment.get('token')).toBeNull()
    expect(fragment.get('error')).toBeTruthy()
    expect(await usersWithEmail('victim@example.com')).toEqual([expect.objectContaining({ id: victim.id })])
  })

  it('Google: email_verified false gets an error and no account', async () => {
    fake.google.signIn(googleUser('unverified-g@example.com', { verified: false }))
    const { fragment } = await socialSignIn('google')
    expect(fragment.get('token')).toBeNull()
    expect(fragment.get('error')).toBeTruthy()
    expect(await usersWithEmail('unverified-g@example.com')).toEqual([])
  })
})

describe('social sign-in: second factor', () => {
  let secret: string
  let userId: string
  const person = githubUser('two-factor@example.com')

  beforeAll(async () => {
    await setGrants(server, ownerToken, 'public', [{ resource: 'system/users', action: 'create' }])
    fake.github.signIn(person)
    const first = await socialSignIn('github')
    const token = first.fragment.get('token')!
    userId = (await session(token)).body.user.id
    const enroll = await server.request('POST', '/api/auth/totp/enroll', { token })
    expect(enroll.status, enroll.text).toBe(200)
    secret = enroll.body.secret
    const confirm = await server.request('POST', '/api/auth/totp/confirm', { token, body: { code: totpCode(secret) } })
    expect(confirm.status, confirm.text).toBe(200)
  })

  it('the callback asks for the code (#error=mfa_required&mfa_token=…) and two-factor/verify gives a session', async () => {
    fake.github.signIn(person)
    const { landing, fragment } = await socialSignIn('github', '/app')
    expect(`${landing.origin}${landing.pathname}`).toBe(`${PUBLIC_URL}/app`)
    expect(fragment.get('error')).toBe('mfa_required')
    expect(fragment.get('token')).toBeNull()
    const mfaToken = fragment.get('mfa_token')!
    expect(mfaToken).toMatch(/^\S{20,200}$/)

    const wrong = await server.request('POST', '/api/auth/two-factor/verify', {
      body: { mfaToken, code: wrongTotpCode(secret) },
    })
    expect(wrong.status, wrong.text).toBe(401)
    expect(wrong.body.error).toBe('unauthorized')

    const right = await server.request('POST', '/api/auth/two-factor/verify', {
      body: { mfaToken, code: totpCode(secret) },
    })
    expect(right.status, right.text).toBe(200)
    expect(right.headers.get('cache-control')).toBe('no-store')
    expect(right.body.user).toMatchObject({ id: userId, email: 'two-factor@example.com' })
    issued.sessionTokens.push(right.body.token)
    const me = await session(right.body.token)
    expect(me.status).toBe(200)
    expect(me.body.user.id).toBe(userId)

    // The pending sign-in is spent.
    const again = await server.request('POST', '/api/auth/two-factor/verify', {
      body: { mfaToken, code: totpCode(secret, 1) },
    })
    expect(again.status).toBe(400)
    expect(again.body.error).toBe('invalid_request')
  })

  it('an unknown mfa token is refused with 400', async () => {
    const reply = await server.request('POST', '/api/auth/two-factor/verify', {
      body: { mfaToken: 'no-such-token', code: '123456' },
    })
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
  })

  it('an account banned after the provider step gets no session from two-factor/verify', async () => {
    const person2 = githubUser('two-factor-banned@example.com')
    fake.github.signIn(person2)
    const first = await socialSignIn('github')
    const token = first.fragment.get('token')!
    const id = (await session(token)).body.user.id as string
    const enroll = await server.request('POST', '/api/auth/totp/enroll', { token })
    const secret2 = enroll.body.secret as string
    expect(
      (await server.request('POST', '/api/auth/totp/confirm', { token, body: { code: totpCode(secret2) } })).status,
    ).toBe(200)

    const pending = await socialSignIn('github')
    const mfaToken = pending.fragment.get('mfa_token')!
    expect(mfaToken).toBeTruthy()
    expect(
      (await server.request('PATCH', `/api/v1/users/${id}`, { token: ownerToken, body: { banned: true } })).status,
    ).toBe(200)
    const reply = await server.request('POST', '/api/auth/two-factor/verify', {
      body: { mfaToken, code: totpCode(secret2) },
    })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('account_banned')
    expect(reply.body.token).toBeUndefined()
  })
})

describe('social sign-in: a new password spends a pending second-factor sign-in (decision 013)', () => {
  it('a sign-in waiting for its code gets no session once the password was changed', async () => {
    const person = githubUser('two-factor-reset@example.com')
    fake.github.signIn(person)
    const first = await socialSignIn('github')
    const token = first.fragment.get('token')!
    const id = (await session(token)).body.user.id as string
    const secret = (await server.request('POST', '/api/auth/totp/enroll', { token })).body.secret as string
    expect(
      (await server.request('POST', '/api/auth/totp/confirm', { token, body: { code: totpCode(secret) } })).status,
    ).toBe(200)

    const pending = await socialSignIn('github')
    const mfaToken = pending.fragment.get('mfa_token')!
    expect(mfaToken).toBeTruthy()
    const changed = await server.request('PATCH', `/api/v1/users/${id}`, {
      token: ownerToken,
      body: { password: 'a new password now' },
    })
    expect(changed.status, changed.text).toBe(200)
    const reply = await server.request('POST', '/api/auth/two-factor/verify', {
      body: { mfaToken, code: totpCode(secret) },
    })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect(reply.body.token).toBeUndefined()
  })
})

describe('social sign-in: two-factor guesses are rate-limited like sign-in', () => {
  let limited: TestServer
  let fake2: FakeOAuth
  beforeAll(async () => {
    fake2 = await startFakeOAuth()
    limited = await startServer({ ...fake2.env(), AUTH_RATE_LIMIT: '3' })
    fake2.registerApp(limited.app.config.publicUrl)
  })
  afterAll(async () => {
    await limited?.stop()
    await fake2?.close()
  })

  it('after AUTH_RATE_LIMIT attempts the next code is refused with 429 and Retry-After', async () => {
    // Through the provider (no password sign-in, so no attempt is spent before the guesses).
    const person = githubUser('guessed@example.com')
    fake2.github.signIn(person)
    const trip = async () => {
      const start = await fetch(startUrl(limited, 'github', '/app'), { redirect: 'manual' })
      const back = location(await fetch(location(start), { redirect: 'manual' }))
      const landing = location(await fetch(back, { redirect: 'manual', headers: { cookie: cookieOf(start) } }))
      return new URLSearchParams(landing.hash.slice(1))
    }
    const token = (await trip()).get('token')!
    const secret = (await send(limited.url, 'POST', '/api/auth/totp/enroll', { token })).body.secret as string
    expect(
      (await send(limited.url, 'POST', '/api/auth/totp/confirm', { token, body: { code: totpCode(secret) } })).status,
    ).toBe(200)

    const mfaToken = (await trip()).get('mfa_token')!
    expect(mfaToken).toBeTruthy()
    for (let i = 0; i < 3; i++) {
      const guess = await send(limited.url, 'POST', '/api/auth/two-factor/verify', {
        body: { mfaToken, code: wrongTotpCode(secret) },
      })
      expect(guess.status, `guess ${i + 1}`).toBe(401)
    }
    const blocked = await send(limited.url, 'POST', '/api/auth/two-factor/verify', {
      body: { mfaToken, code: totpCode(secret) },
    })
    expect(blocked.status, blocked.text).toBe(429)
    expect(blocked.body.error).toBe('rate_limited')
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe('social sign-in: logs', () => {
  it('no log line carries the client secrets, codes, provider access tokens or the tokens Plinth issued', async () => {
    const secrets = [
      fake.github.clientSecret,
      fake.google.clientSecret,
      ...fake.github.codes,
      ...fake.google.codes,
      ...fake.github.accessTokens,
      ...fake.google.accessTokens,
      ...issued.sessionTokens,
      ...issued.mfaTokens,
    ]
    // The flows above ran, so there is something to look for.
    expect(fake.github.accessTokens.length).toBeGreaterThan(3)
    expect(fake.google.accessTokens.length).toBeGreaterThan(1)
    expect(issued.sessionTokens.length).toBeGreaterThan(3)
    expect(issued.mfaTokens.length).toBeGreaterThan(0)
    expect(server.logs.length).toBeGreaterThan(20)
    const log = server.logs.join('\n')
    for (const secret of secrets)
      expect(log.includes(secret), `a log line contains ${secret.slice(0, 12)}…`).toBe(false)
  })
})

function pick(env: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith(prefix)))
}
