import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A local OAuth 2.0 provider that speaks GitHub's and Google's wire protocol the way arctic's
 * OAuth2Client uses it (authorization code grant with PKCE S256), on node:http and port 0.
 *
 * GitHub:  GET  {base}/github/login/oauth/authorize     POST {base}/github/login/oauth/access_token
 *          GET  {base}/github-api/user                  GET  {base}/github-api/user/emails
 * Google:  GET  {base}/google/o/oauth2/v2/auth          POST {base}/google/token
 *          GET  {base}/google/v1/userinfo
 *
 * The test decides who is signed in at the provider (`signIn`), whether they refuse consent (`denyNext`)
 * and can damage the stored PKCE challenge of the next grant (`tamperNextChallenge`). Every request the
 * provider refused is kept in `refusals`, so a test can tell "the app failed" from "the fake refused".
 */

export interface GitHubUser {
  id: number
  login: string
  name: string | null
  emails: { email: string; primary: boolean; verified: boolean }[]
}

export interface GoogleUser {
  sub: string
  email: string
  email_verified: boolean
  name: string
}

export interface Refusal {
  provider: 'github' | 'google'
  endpoint: 'authorize' | 'token' | 'profile'
  error: string
  description: string
}

export interface ProviderControl<U> {
  readonly clientId: string
  readonly clientSecret: string
  /** The redirect URI registered for the app (exact match required); set by `registerApp`. */
  readonly redirectUri: string
  /** The person signed in at the provider's site; they approve the next authorization requests. */
  signIn(user: U): void
  /** The next authorization is refused by the person (error=access_denied back to the app). */
  denyNext(): void
  /** The next grant stores a challenge that no verifier matches (as if the verifier had been swapped). */
  tamperNextChallenge(): void
  /** Access tokens issued so far (they must never surface in the app's logs). */
  readonly accessTokens: string[]
  /** Authorization codes issued so far. */
  readonly codes: string[]
}

export interface FakeOAuth {
  readonly url: string
  readonly github: ProviderControl<GitHubUser>
  readonly google: ProviderControl<GoogleUser>
  readonly refusals: Refusal[]
  /** Plinth settings that point both providers at this fake. */
  env(): Record<string, string>
  /** Registers the app's PUBLIC_URL: the redirect URIs become `<publicUrl>/api/auth/callback/<provider>`. */
  registerApp(publicUrl: string): void
  close(): Promise<void>
}

interface Grant {
  provider: 'github' | 'google'
  clientId: string
  redirectUri: string
  challenge: string
  scopes: string[]
  user: GitHubUser | GoogleUser
  expiresAt: number
  used: boolean
}

interface IssuedToken {
  provider: 'github' | 'google'
  scopes: string[]
  user: GitHubUser | GoogleUser
}

interface ProviderState<U> {
  control: ProviderControl<U>
  redirectUri: string
  signedIn: U | null
  deny: boolean
  tamper: boolean
}

const codeLifetimeMs = 10 * 60_000
// RFC 7636 §4.1: 43-128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/
const challengePattern = /^[A-Za-z0-9_-]{43}$/

/** base64url(sha256(verifier)), without padding: the S256 code challenge. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

/** Starts the fake; call `registerApp` with the app's PUBLIC_URL before the first authorization. */
export async function startFakeOAuth(): Promise<FakeOAuth> {
  const refusals: Refusal[] = []
  const grants = new Map<string, Grant>()
  const tokens = new Map<string, IssuedToken>()

  function providerState<U>(name: 'github' | 'google'): ProviderState<U> {
    const state: ProviderState<U> = {
      redirectUri: '',
      signedIn: null,
      deny: false,
      tamper: false,
      control: {
        clientId: `${name}-client-${randomBytes(6).toString('hex')}`,
        clientSecret: `${name}-secret-${randomBytes(16).toString('hex')}`,
        get redirectUri() {
          return state.redirectUri
        },
        signIn: (user) => void (state.signedIn = user),
        denyNext: () => void (state.deny = true),
        tamperNextChallenge: () => void (state.tamper = true),
        accessTokens: [],
        codes: [],
      },
    }
    return state
  }
  const github = providerState<GitHubUser>('github')
  const google = providerState<GoogleUser>('google')
  const states = { github, google } as const

  function refuse(
    provider: Refusal['provider'],
    endpoint: Refusal['endpoint'],
    error: string,
    description: string,
  ): Refusal {
    const refusal = { provider, endpoint, error, description }
    refusals.push(refusal)
    return refusal
  }

  // --- authorization endpoint (the browser arrives here) ---

  function authorize(provider: 'github' | 'google', url: URL, res: ServerResponse): void {
    const state = states[provider] as ProviderState<GitHubUser | GoogleUser>
    const q = url.searchParams
    // RFC 6749 §4.1.2.1: with a bad client or redirect URI the provider must not redirect at all.
    if (q.get('client_id') !== state.control.clientId) {
      const r = refuse(provider, 'authorize', 'invalid_client', `unknown client_id ${q.get('client_id')}`)
      return send(res, 400, 'text/plain', `${r.error}: ${r.description}`)
    }
    const redirectUri = q.get('redirect_uri')
    if (!redirectUri || redirectUri !== state.redirectUri) {
      const r = refuse(provider, 'authorize', 'redirect_uri_mismatch', `redirect_uri ${redirectUri} is not registered`)
      return send(res, 400, 'text/plain', `${r.error}: ${r.description}`)
    }
    const back = new URL(redirectUri)
    const returnError = (error: string, description: string) => {
      refuse(provider, 'authorize', error, description)
      back.searchParams.set('error', error)
      back.searchParams.set('error_description', description)
      if (q.get('state')) back.searchParams.set('state', q.get('state')!)
      redirect(res, back.toString())
    }
    if (q.get('response_type') !== 'code') return returnError('unsupported_response_type', 'response_type must be code')
    const stateParam = q.get('state')
    if (!stateParam) return returnError('invalid_request', 'state is required')
    if (q.get('code_challenge_method') !== 'S256')
      return returnError('invalid_request', 'code_challenge_method must be S256')
    const challenge = q.get('code_challenge') ?? ''
    if (!challengePattern.test(challenge))
      return returnError('invalid_request', 'code_challenge must be base64url(sha256(verifier))')
    const scopes = (q.get('scope') ?? '').split(' ').filter(Boolean)
    if (!state.signedIn) {
      refuse(provider, 'authorize', 'login_required', 'nobody is signed in at the provider (call signIn first)')
      return send(res, 401, 'text/plain', 'Sign in to continue')
    }
    if (state.deny) {
      state.deny = false
      // GitHub and Google both send the person back with error=access_denied and the state.
      back.searchParams.set('error', 'access_denied')
      back.searchParams.set('error_description', 'The user has denied your application access.')
      back.searchParams.set('state', stateParam)
      return redirect(res, back.toString())
    }
    const code = randomBytes(20).toString('hex')
    const storedChallenge = state.tamper ? s256(`tampered-${challenge}`) : challenge
    state.tamper = false
    grants.set(code, {
      provider,
      clientId: state.control.clientId,
      redirectUri,
      challenge: storedChallenge,
      scopes,
      user: state.signedIn,
      expiresAt: Date.now() + codeLifetimeMs,
      used: false,
    })
    state.control.codes.push(code)
    back.searchParams.set('code', code)
    back.searchParams.set('state', stateParam)
    if (provider === 'google') back.searchParams.set('scope', scopes.join(' '))
    redirect(res, back.toString())
  }

  // --- token endpoint (the app calls it, server to server) ---

  function clientCredentials(
    req: IncomingMessage,
    form: URLSearchParams,
  ): { id: string; secret: string; methods: number } | null {
    let methods = 0
    let id = ''
    let secret = ''
    const header = req.headers.authorization
    if (header?.startsWith('Basic ')) {
      methods++
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
      const colon = decoded.indexOf(':')
      if (colon < 0) return null
      // RFC 6749 §2.3.1: the id and secret are form-urlencoded before Basic encoding.
      id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '))
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '))
    }
    if (form.has('client_secret')) {
      methods++
      id = form.get('client_id') ?? ''
      secret = form.get('client_secret') ?? ''
    }
    return methods === 0 ? null : { id, secret, methods }
  }

  async function token(provider: 'github' | 'google', req: IncomingMessage, res: ServerResponse): Promise<void> {
    const state = states[provider] as ProviderState<GitHubUser | GoogleUser>
    const fail = (status: number, error: string, description: string) => {
      refuse(provider, 'token', error, description)
      // GitHub answers token errors with 200 and an error body; Google with 400 (401 for the client).
      const body = { error, error_description: description }
      if (provider === 'github')
        return tokenReply(req, res, 200, { ...body, error_uri: 'https://docs.github.com/apps/troubleshooting' })
      return send(res, status, 'application/json', JSON.stringify(body))
    }
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return fail(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded')
    }
    const form = new URLSearchParams(await readBody(req))
    const credentials = clientCredentials(req, form)
    if (!credentials) return fail(401, 'invalid_client', 'client authentication is required')
    if (credentials.methods > 1)
      return fail(400, 'invalid_request', 'use one client authentication method, not several')
    if (credentials.id !== state.control.clientId || !safeEqual(credentials.secret, state.control.clientSecret)) {
      return fail(401, 'invalid_client', 'wrong client_id or client_secret')
    }
    if (form.has('client_id') && form.get('client_id') !== state.control.clientId)
      return fail(400, 'invalid_request', 'client_id does not match the credentials')
    if (form.get('grant_type') !== 'authorization_code')
      return fail(400, 'unsupported_grant_type', 'grant_type must be authorization_code')
    const code = form.get('code') ?? ''
    const grant = grants.get(code)
    if (!grant || grant.provider !== provider || grant.clientId !== credentials.id)
      return fail(400, 'invalid_grant', 'unknown authorization code')
    if (grant.used) return fail(400, 'invalid_grant', 'the authorization code was already used')
    if (grant.expiresAt <= Date.now()) return fail(400, 'invalid_grant', 'the authorization code has expired')
    // The grant is spent by this attempt whatever happens next (RFC 6749 §4.1.2).
    grant.used = true
    if (form.get('redirect_uri') !== grant.redirectUri)
      return fail(400, 'invalid_grant', 'redirect_uri differs from the authorization request')
    const verifier = form.get('code_verifier') ?? ''
    if (!verifierPattern.test(verifier)) return fail(400, 'invalid_request', 'code_verifier is missing or malformed')
    if (!safeEqual(s256(verifier), grant.challenge))
      return fail(400, 'invalid_grant', 'code_verifier does not match the code_challenge')

    const accessToken =
      provider === 'github' ? `gho_${randomBytes(18).toString('hex')}` : `ya29.${randomBytes(24).toString('base64url')}`
    tokens.set(accessToken, { provider, scopes: grant.scopes, user: grant.user })
    state.control.accessTokens.push(accessToken)
    if (provider === 'github')
      return tokenReply(req, res, 200, {
        access_token: accessToken,
        token_type: 'bearer',
        scope: grant.scopes.join(','),
      })
    return send(
      res,
      200,
      'application/json',
      JSON.stringify({
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: 3599,
        scope: grant.scopes.join(' '),
      }),
    )
  }

  /** GitHub answers form-encoded unless the client asks for JSON. */
  function tokenReply(req: IncomingMessage, res: ServerResponse, status: number, body: Record<string, string>): void {
    if (String(req.headers.accept ?? '').includes('application/json'))
      return send(res, status, 'application/json', JSON.stringify(body))
    send(res, status, 'application/x-www-form-urlencoded', new URLSearchParams(body).toString())
  }

  // --- profile endpoints (the app calls them with the access token) ---

  function bearer(req: IncomingMessage, provider: 'github' | 'google'): IssuedToken | null {
    const match = /^(?:Bearer|token) +(\S+)$/i.exec(req.headers.authorization ?? '')
    const issued = match ? tokens.get(match[1]!) : undefined
    return issued && issued.provider === provider ? issued : null
  }

  function githubApi(path: string, req: IncomingMessage, res: ServerResponse): void {
    if (!req.headers['user-agent']) {
      refuse('github', 'profile', 'forbidden', 'GitHub requires a User-Agent header')
      return send(
        res,
        403,
        'application/json',
        JSON.stringify({
          message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.',
        }),
      )
    }
    const issued = bearer(req, 'github')
    if (!issued) {
      refuse('github', 'profile', 'bad_credentials', `no such token for ${path}`)
      return send(
        res,
        401,
        'application/json',
        JSON.stringify({
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
          status: '401',
        }),
      )
    }
    const user = issued.user as GitHubUser
    if (path === '/user') {
      const publicEmail = user.emails.find((e) => e.primary)?.email ?? null
      return send(
        res,
        200,
        'application/json',
        JSON.stringify({
          login: user.login,
          id: user.id,
          node_id: `U_${user.id}`,
          type: 'User',
          name: user.name,
          email: publicEmail,
        }),
      )
    }
    if (path === '/user/emails') {
      // Without the user:email scope GitHub answers 404 here.
      if (!issued.scopes.includes('user:email')) {
        refuse('github', 'profile', 'not_found', '/user/emails needs the user:email scope')
        return send(res, 404, 'application/json', JSON.stringify({ message: 'Not Found', status: '404' }))
      }
      return send(
        res,
        200,
        'application/json',
        JSON.stringify(user.emails.map((e) => ({ ...e, visibility: e.primary ? 'public' : null }))),
      )
    }
    send(res, 404, 'application/json', JSON.stringify({ message: 'Not Found', status: '404' }))
  }

  function googleUserinfo(req: IncomingMessage, res: ServerResponse): void {
    const issued = bearer(req, 'google')
    if (!issued || !issued.scopes.includes('openid')) {
      refuse('google', 'profile', 'invalid_token', issued ? 'the token lacks the openid scope' : 'unknown token')
      res.setHeader('WWW-Authenticate', 'Bearer realm="https://accounts.google.com/", error="invalid_token"')
      return send(
        res,
        401,
        'application/json',
        JSON.stringify({ error: 'invalid_request', error_description: 'Invalid Credentials' }),
      )
    }
    const user = issued.user as GoogleUser
    const body: Record<string, unknown> = { sub: user.sub }
    if (issued.scopes.includes('email')) Object.assign(body, { email: user.email, email_verified: user.email_verified })
    if (issued.scopes.includes('profile')) Object.assign(body, { name: user.name, given_name: user.name.split(' ')[0] })
    send(res, 200, 'application/json', JSON.stringify(body))
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake')
    const route = `${req.method} ${url.pathname}`
    const done = (err: unknown) => send(res, 500, 'text/plain', String(err))
    try {
      if (route === 'GET /github/login/oauth/authorize') return authorize('github', url, res)
      if (route === 'POST /github/login/oauth/access_token') return void token('github', req, res).catch(done)
      if (req.method === 'GET' && url.pathname.startsWith('/github-api/'))
        return githubApi(url.pathname.slice('/github-api'.length), req, res)
      if (route === 'GET /google/o/oauth2/v2/auth') return authorize('google', url, res)
      if (route === 'POST /google/token') return void token('google', req, res).catch(done)
      if (route === 'GET /google/v1/userinfo') return googleUserinfo(req, res)
      send(res, 404, 'text/plain', `no route ${route}`)
    } catch (err) {
      done(err)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    url,
    github: github.control,
    google: google.control,
    refusals,
    env: () => ({
      GITHUB_CLIENT_ID: github.control.clientId,
      GITHUB_CLIENT_SECRET: github.control.clientSecret,
      GITHUB_AUTH_URL: `${url}/github`,
      GITHUB_API_URL: `${url}/github-api`,
      GOOGLE_CLIENT_ID: google.control.clientId,
      GOOGLE_CLIENT_SECRET: google.control.clientSecret,
      GOOGLE_AUTH_URL: `${url}/google/o/oauth2/v2/auth`,
      GOOGLE_TOKEN_URL: `${url}/google/token`,
      GOOGLE_USERINFO_URL: `${url}/google/v1/userinfo`,
    }),
    registerApp(publicUrl) {
      for (const [name, state] of Object.entries(states))
        state.redirectUri = `${publicUrl.replace(/\/+$/, '')}/api/auth/callback/${name}`
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' })
  res.end(body)
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location })
  res.end()
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
