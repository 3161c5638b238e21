import { randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type RequestOptions, type TestServer } from '../support/harness.js'

/**
 * Proof that a secret leaves Plinth at most once, in the response that created it, and never reaches a log
 * line: passwords (never echoed at all), session tokens, raw API keys, reset tokens, TOTP secrets (plain
 * and sealed) and password hashes. A broad walk over the endpoints collects every response (status,
 * headers, body) and the log, then each secret is looked for everywhere.
 */

interface Recorded {
  label: string
  status: number
  headers: string
  text: string
}

interface Known {
  kind: string
  value: string
  /** Index of the one response allowed to carry it (its creation response), or null for none. */
  createdIn: number | null
}

let server: TestServer
const responses: Recorded[] = []
const secrets: Known[] = []
/** Every Authorization header value sent. */
const authorizations = new Set<string>()
let ipCounter = 0
const runId = randomBytes(4).toString('hex')

/** A password nobody could mistake for anything else. */
const pw = (name: string) => `pw-${name}-${randomBytes(9).toString('hex')}`

function remember(kind: string, value: string, createdIn: number | null = null): string {
  expect(value, kind).toBeTruthy()
  secrets.push({ kind, value, createdIn })
  return value
}

/** One request from a fresh client address (the auth rate limit is per IP), recorded with its status checked. */
async function call(
  label: string,
  method: string,
  path: string,
  status: number,
  options: RequestOptions & { ip?: string } = {},
): Promise<Reply> {
  const ip = options.ip ?? `10.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}.7`
  const headers: Record<string, string> = { ...options.headers, 'X-Forwarded-For': ip }
  if (options.token) authorizations.add(`Bearer ${options.token}`)
  if (headers.authorization) authorizations.add(headers.authorization)
  const reply = await server.request(method, path, { ...options, headers })
  responses.push({
    label: `${label} (${method} ${path})`,
    status: reply.status,
    headers: [...reply.headers].map(([k, v]) => `${k}: ${v}`).join('\n'),
    text: reply.text,
  })
  expect(reply.status, `${label}: ${reply.text}`).toBe(status)
  return reply
}
const lastIndex = () => responses.length - 1

/** Every stored password hash and sealed TOTP secret, read straight from the system database. */
async function rememberStoredSecrets(): Promise<void> {
  const rows = (await server.app.registry.system.db
    .selectFrom('users')
    .select(['password_hash', 'totp_secret'])
    .execute()) as { password_hash: string | null; totp_secret: string | null }[]
  for (const row of rows) {
    if (row.password_hash && !secrets.some((s) => s.value === row.password_hash))
      remember('stored password hash', row.password_hash)
    if (row.totp_secret && !secrets.some((s) => s.value === row.totp_secret))
      remember('sealed TOTP secret', row.totp_secret)
  }
}

function totpCode(secret: string, offsetSteps = 0): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
    timestamp: Date.now() + offsetSteps * 30_000,
  })
}

beforeAll(async () => {
  // trace: every line any module might write is captured. TRUST_PROXY lets each call come from its own address.
  server = await startServer({ LOG_LEVEL: 'trace', AUTH_RATE_LIMIT: '5', TRUST_PROXY: 'true' })
  const ownerEmail = `owner-${runId}@example.com`
  const ownerPassword = remember('password (sign-up)', pw('owner'))

  // Sign-up: success, duplicate, closed, invalid, oversized, malformed JSON.
  const signUp = await call('sign-up', 'POST', '/api/auth/sign-up/email', 200, {
    body: { email: ownerEmail, password: ownerPassword, name: 'Owner' },
  })
  const ownerSignUpToken = remember('session token (sign-up)', signUp.body.token, lastIndex())
  await call('sign-up duplicate', 'POST', '/api/auth/sign-up/email', 409, {
    body: { email: ownerEmail, password: remember('password (duplicate sign-up)', pw('dup')), name: 'Again' },
  })
  await call('sign-up closed', 'POST', '/api/auth/sign-up/email', 403, {
    body: {
      email: `late-${runId}@example.com`,
      password: remember('password (closed sign-up)', pw('closed')),
      name: 'Late',
    },
  })
  await call('sign-up bad email', 'POST', '/api/auth/sign-up/email', 400, {
    body: { email: 'not-an-email', password: remember('password (invalid sign-up)', pw('invalid')), name: 'X' },
  })
  await call('sign-up oversized password', 'POST', '/api/auth/sign-up/email', 400, {
    body: {
      email: `big-${runId}@example.com`,
      password: remember('password (oversized)', `${pw('big')}${'z'.repeat(300)}`),
      name: 'X',
    },
  })
  await call('sign-up malformed JSON', 'POST', '/api/auth/sign-up/email', 400, {
    rawBody: `{"email":"${ownerEmail}","password":"${remember('password (malformed body)', pw('malformed'))}"`,
    headers: { 'content-type': 'application/json' },
  })

  // Sign-in: success, wrong password, unknown account, then the limit (429).
  const signIn = await call('sign-in', 'POST', '/api/auth/sign-in/email', 200, {
    body: { email: ownerEmail, password: ownerPassword },
  })
  const owner = remember('session token (sign-in)', signIn.body.token, lastIndex())
  await call('sign-in wrong password', 'POST', '/api/auth/sign-in/email', 401, {
    body: { email: ownerEmail, password: remember('password (wrong)', pw('wrong')) },
  })
  await call('sign-in unknown account', 'POST', '/api/auth/sign-in/email', 401, {
    body: { email: `nobody-${runId}@example.com`, password: remember('password (unknown account)', pw('unknown')) },
  })
  const burstIp = `192.0.2.${Math.floor(Math.random() * 250) + 1}`
  const burstPassword = remember('password (rate-limited)', pw('burst'))
  for (let i = 0; i < 5; i++)
    await call(`sign-in attempt ${i + 1}`, 'POST', '/api/auth/sign-in/email', 401, {
      ip: burstIp,
      body: { email: ownerEmail, password: burstPassword },
    })
  await call('sign-in over the limit', 'POST', '/api/auth/sign-in/email', 429, {
    ip: burstIp,
    body: { email: ownerEmail, password: ownerPassword },
  })

  // The session, and what bad credentials get.
  await call('get-session', 'GET', '/api/auth/get-session', 200, { token: owner })
  await call('get-session (sign-up token)', 'GET', '/api/auth/get-session', 200, { token: ownerSignUpToken })
  await call('get-session no credential', 'GET', '/api/auth/get-session', 401)
  await call('get-session unknown token', 'GET', '/api/auth/get-session', 401, {
    token: `x${randomBytes(16).toString('hex')}`,
  })
  await call('get-session malformed header', 'GET', '/api/auth/get-session', 401, {
    headers: { authorization: `Basic ${Buffer.from(`${ownerEmail}:${ownerPassword}`).toString('base64')}` },
  })
  await call('capabilities', 'GET', '/api/auth/capabilities', 200)

  // Users: create, duplicate, list, get, patch (name, password), forbidden create, unknown id.
  const editorEmail = `editor-${runId}@example.com`
  const editorPassword = remember('password (user create)', pw('editor'))
  const created = await call('create user', 'POST', '/api/v1/users', 201, {
    token: owner,
    body: { email: editorEmail, password: editorPassword, name: 'Ed', role: 'editor' },
  })
  const editorId = created.body.data.id as string
  await call('create user duplicate', 'POST', '/api/v1/users', 409, {
    token: owner,
    body: { email: editorEmail, password: remember('password (duplicate user)', pw('dupuser')), role: 'editor' },
  })
  await call('create user short password', 'POST', '/api/v1/users', 400, {
    token: owner,
    body: {
      email: `short-${runId}@example.com`,
      password: remember('password (too short)', 'Sh0rt!x'),
      role: 'viewer',
    },
  })
  const editorSignIn = await call('editor sign-in', 'POST', '/api/auth/sign-in/email', 200, {
    body: { email: editorEmail, password: editorPassword },
  })
  const editorFirst = remember('session token (editor sign-in)', editorSignIn.body.token, lastIndex())
  await call('create user as editor', 'POST', '/api/v1/users', 403, {
    token: editorFirst,
    body: {
      email: `x-${runId}@example.com`,
      password: remember('password (forbidden create)', pw('forbidden')),
      role: 'viewer',
    },
  })
  await call('users list as editor', 'GET', '/api/v1/users', 403, { token: editorFirst })
  await call('settings as editor', 'GET', '/api/v1/settings', 403, { token: editorFirst })
  await rememberStoredSecrets()
  await call('users list', 'GET', '/api/v1/users?limit=100', 200, { token: owner })
  await call('user get', 'GET', `/api/v1/users/${editorId}`, 200, { token: owner })
  await call('user get unknown', 'GET', '/api/v1/users/00000000000000000000000000000000', 404, { token: owner })
  await call('user patch name', 'PATCH', `/api/v1/users/${editorId}`, 200, { token: owner, body: { name: 'Edwina' } })
  const patchedPassword = remember('password (user patch)', pw('patched'))
  await call('user patch password', 'PATCH', `/api/v1/users/${editorId}`, 200, {
    token: owner,
    body: { password: patchedPassword },
  })
  await call('old session after password change', 'GET', '/api/auth/get-session', 401, { token: editorFirst })
  await call('editor sign-in old password', 'POST', '/api/auth/sign-in/email', 401, {
    body: { email: editorEmail, password: editorPassword },
  })
  const editorSecond = await call('editor sign-in new password', 'POST', '/api/auth/sign-in/email', 200, {
    body: { email: editorEmail, password: patchedPassword },
  })
  remember('session token (editor after patch)', editorSecond.body.token, lastIndex())
  await rememberStoredSecrets()

  // Reset: an admin-issued link, the page, the reset, a reused link, the mailed variant.
  const link = await call('reset link', 'POST', `/api/v1/users/${editorId}/reset-link`, 200, { token: owner })
  const resetToken = remember('reset token', new URL(link.body.url).searchParams.get('token')!, lastIndex())
  await call('reset page', 'GET', `/api/auth/reset-password?token=${encodeURIComponent(resetToken)}`, 200)
  const resetPassword = remember('password (reset)', pw('reset'))
  await call('reset password', 'POST', '/api/auth/reset-password', 200, {
    body: { token: resetToken, password: resetPassword },
  })
  await call('reset password reused link', 'POST', '/api/auth/reset-password', 400, {
    body: { token: resetToken, password: remember('password (reused reset)', pw('reused')) },
  })
  await call('request password reset', 'POST', '/api/auth/request-password-reset', 200, {
    body: { identifier: editorEmail },
  })
  const afterReset = await call('editor sign-in after reset', 'POST', '/api/auth/sign-in/email', 200, {
    body: { email: editorEmail, password: resetPassword },
  })
  const editor = remember('session token (editor after reset)', afterReset.body.token, lastIndex())
  await rememberStoredSecrets()

  // API keys: create, list, use, misuse, revoke, use after revoke.
  const key = await call('api key create', 'POST', '/api/auth/api-keys', 201, {
    token: owner,
    body: { label: 'ci', capabilities: ['system/users:read'] },
  })
  const raw = remember('raw API key', key.body.raw, lastIndex())
  await call('api key create beyond own rights', 'POST', '/api/auth/api-keys', 403, {
    token: editor,
    body: { label: 'x', capabilities: ['system/users:delete'] },
  })
  await call('api keys list', 'GET', '/api/auth/api-keys', 200, { token: owner })
  await call('users list with the key', 'GET', '/api/v1/users', 200, { token: raw })
  await call('settings with the key (no capability)', 'GET', '/api/v1/settings', 403, { token: raw })
  await call('get-session with the key', 'GET', '/api/auth/get-session', 401, { token: raw })
  await call('sign-out with the key', 'POST', '/api/auth/sign-out', 400, { token: raw })
  await call('api key revoke', 'DELETE', `/api/auth/api-keys/${key.body.id}`, 200, { token: owner })
  await call('revoked key', 'GET', '/api/v1/users', 401, { token: raw })

  // Settings and roles, including refusals.
  await call('settings get', 'GET', '/api/v1/settings', 200, { token: owner })
  await call('settings patch', 'PATCH', '/api/v1/settings', 200, {
    token: owner,
    body: { 'auth.usernameEnabled': true },
  })
  await call('settings patch unknown key', 'PATCH', '/api/v1/settings', 400, {
    token: owner,
    body: { 'no.such.setting': 1 },
  })
  const roles = await call('roles list', 'GET', '/api/v1/roles', 200, { token: owner })
  const viewerRole = (roles.body.data as { id: string; name: string }[]).find((r) => r.name === 'viewer')!
  await call('grants get', 'GET', `/api/v1/roles/${viewerRole.id}/grants`, 200, { token: owner })
  await call('grants put', 'PUT', `/api/v1/roles/${viewerRole.id}/grants`, 200, {
    token: owner,
    body: { grants: [{ resource: 'collections/*', action: 'read' }] },
  })
  await call('grants put malformed', 'PUT', `/api/v1/roles/${viewerRole.id}/grants`, 400, {
    token: owner,
    body: { grants: [{ resource: 'collections/*', action: 'not an action!' }] },
  })
  await call('roles as editor', 'POST', '/api/v1/roles', 403, { token: editor, body: { name: 'sneaky' } })
  await call('unknown route', 'GET', '/api/v1/nothing-here', 404, { token: owner })

  // TOTP: enrol (the secret is shown once), confirm, sign in with and without the code, refuse a second enrolment.
  const enroll = await call('totp enroll', 'POST', '/api/auth/totp/enroll', 200, { token: owner })
  const totpSecret = remember('TOTP secret', enroll.body.secret, lastIndex())
  await rememberStoredSecrets()
  expect(secrets.some((s) => s.kind === 'sealed TOTP secret')).toBe(true)
  await call('totp confirm', 'POST', '/api/auth/totp/confirm', 200, {
    token: owner,
    body: { code: totpCode(totpSecret) },
  })
  await call('totp enroll again', 'POST', '/api/auth/totp/enroll', 409, { token: owner })
  await call('sign-in without the code', 'POST', '/api/auth/sign-in/email', 403, {
    body: { email: ownerEmail, password: ownerPassword },
  })
  const withCode = await call('sign-in with the code', 'POST', '/api/auth/sign-in/email', 200, {
    body: { email: ownerEmail, password: ownerPassword, code: totpCode(totpSecret) },
  })
  const ownerWithCode = remember('session token (sign-in with TOTP)', withCode.body.token, lastIndex())
  await call('users list after TOTP', 'GET', '/api/v1/users?limit=100', 200, { token: ownerWithCode })

  // The audit log, every page of it.
  for (let page = 1; ; page++) {
    const audit = await call(`audit log page ${page}`, 'GET', `/api/v1/audit-log?limit=100&page=${page}`, 200, {
      token: owner,
    })
    if (!audit.body.hasMore) break
  }
  await call('audit log as editor', 'GET', '/api/v1/audit-log', 403, { token: editor })

  // Sign-out, then the token is dead.
  await call('sign-out', 'POST', '/api/auth/sign-out', 200, { token: owner })
  await call('signed-out token', 'GET', '/api/auth/get-session', 401, { token: owner })
  await rememberStoredSecrets()
})

afterAll(async () => {
  await server?.stop()
})

function carriers(value: string, allowed: number | null): string[] {
  return responses.flatMap((r, i) =>
    i !== allowed && (r.text.includes(value) || r.headers.includes(value)) ? [r.label] : [],
  )
}

describe('secrets never leave after their creation response', () => {
  it('the walk covered what it claims to', () => {
    const statuses = new Set(responses.map((r) => r.status))
    for (const status of [200, 201, 400, 401, 403, 404, 409, 429])
      expect(statuses, `no ${status} response`).toContain(status)
    const kinds = new Set(secrets.map((s) => s.kind))
    for (const kind of [
      'password (sign-up)',
      'password (user create)',
      'password (reset)',
      'session token (sign-in)',
      'raw API key',
      'stored password hash',
      'sealed TOTP secret',
      'TOTP secret',
    ]) {
      expect(kinds, kind).toContain(kind)
    }
    // Each creation response does carry its secret: the search below looks for the right strings.
    for (const s of secrets.filter((x) => x.createdIn !== null))
      expect(responses[s.createdIn!]!.text, s.kind).toContain(s.value)
  })

  it('no response carries a password, ever', () => {
    for (const s of secrets.filter((x) => x.kind.startsWith('password')))
      expect(carriers(s.value, null), s.kind).toEqual([])
  })

  it('session tokens, the raw API key, the reset token and the TOTP secret appear only in their creation response', () => {
    for (const s of secrets.filter((x) => x.createdIn !== null))
      expect(carriers(s.value, s.createdIn), s.kind).toEqual([])
  })

  it('no response carries a stored password hash or a sealed TOTP secret', () => {
    for (const s of secrets.filter((x) => x.kind === 'stored password hash' || x.kind === 'sealed TOTP secret'))
      expect(carriers(s.value, null), s.kind).toEqual([])
    expect(carriers('pbkdf2_sha256$', null)).toEqual([])
  })
})

describe('secrets never reach the log', () => {
  const requestLines = () => server.logs.filter((l) => l.includes('"msg":"request"')).length
  beforeAll(async () => {
    // A request's log line is written when its connection closes, which may be just after the client has
    // the response: wait (briefly) until every request has its line, so the search below sees them all.
    for (let i = 0; i < 100 && requestLines() < responses.length; i++) await new Promise((r) => setTimeout(r, 20))
  })

  it('the log was captured (request lines and the app log)', () => {
    expect(requestLines()).toBe(responses.length)
    // The mailed reset with no channel configured is an app-log warning: that log is captured too.
    expect(server.logs.some((l) => l.includes('no email channel configured'))).toBe(true)
  })

  it('no log line carries any secret, hash, sealed value or Authorization header', () => {
    const log = server.logs.join('\n')
    const needles = [
      ...secrets.map((s) => ({ what: s.kind, value: s.value })),
      ...[...authorizations].map((a) => ({ what: 'Authorization header', value: a })),
      { what: 'hash prefix', value: 'pbkdf2_sha256$' },
    ]
    expect(needles.length).toBeGreaterThan(30)
    const found = needles.filter((n) => log.includes(n.value)).map((n) => n.what)
    expect(found).toEqual([])
  })
})
