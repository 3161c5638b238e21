import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/lib/clock.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createLoadGate, type HeldLoad } from '../support/load-gate.js'

/**
 * Issue 12 item 17: a credential's first use reads the database, and a sign-out, ban, role change or key
 * revocation that lands after those reads but before the result is cached must not be lost (the cached
 * copy would otherwise serve the old state for the cache's 5 minutes). Each test holds the first use
 * right there (the app's credentialLoadPace), makes the change, lets the first use finish, and then asks
 * again. The request that overlapped the change may still see the old state; the next one may not.
 */
const gate = createLoadGate()
let server: TestServer
let owner: Account

beforeAll(async () => {
  server = await startServer({}, { credentialLoadPace: gate.pace })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

const getSession = (token: string) => server.request('GET', '/api/auth/get-session', { token })
const listUsers = (token: string) => server.request('GET', '/api/v1/users', { token })

/** Starts `firstUse` held after its reads, runs `change` (which must answer 200), lets the first use finish. */
async function race(held: HeldLoad, firstUse: () => Promise<Reply>, change: () => Promise<Reply>): Promise<Reply> {
  const pending = firstUse()
  await held.reached
  const changed = await change()
  expect(changed.status, changed.text).toBe(200)
  held.release()
  return pending
}

async function createKey(token: string, capabilities: string[]): Promise<{ id: string; raw: string }> {
  const reply = await server.request('POST', '/api/auth/api-keys', { token, body: { label: 'raced', capabilities } })
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

describe('sessions: a change racing the first use of a token', () => {
  it('sign-out: the token is 401 afterwards', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const first = await race(
      gate.hold('session'),
      () => getSession(account.token),
      () => server.request('POST', '/api/auth/sign-out', { token: account.token }),
    )
    expect(first.status, first.text).toBe(200)
    const after = await getSession(account.token)
    expect(after.status, after.text).toBe(401)
    expect(after.body.error).toBe('unauthorized')
  })

  it('ban: the token is 401 afterwards', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    await race(
      gate.hold('session'),
      () => getSession(account.token),
      () => server.request('PATCH', `/api/v1/users/${account.id}`, { token: owner.token, body: { banned: true } }),
    )
    expect((await getSession(account.token)).status).toBe(401)
  })

  it('role change: the new role applies afterwards', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const first = await race(
      gate.hold('session'),
      () => getSession(account.token),
      () => server.request('PATCH', `/api/v1/users/${account.id}`, { token: owner.token, body: { role: 'admin' } }),
    )
    expect(first.body.user.role).toBe('viewer')
    const after = await getSession(account.token)
    expect(after.status, after.text).toBe(200)
    expect(after.body.user.role).toBe('admin')
    expect((await listUsers(account.token)).status).toBe(200)
  })
})

describe('API keys: a change racing the first use of a key', () => {
  it('revocation: the key is 401 afterwards', async () => {
    const key = await createKey(owner.token, ['system/users:read'])
    const first = await race(
      gate.hold('api_key'),
      () => listUsers(key.raw),
      () => server.request('DELETE', `/api/auth/api-keys/${key.id}`, { token: owner.token }),
    )
    expect(first.status, first.text).toBe(200)
    const after = await listUsers(key.raw)
    expect(after.status, after.text).toBe(401)
    expect(after.body.error).toBe('unauthorized')
  })

  it("the creator's ban: the key is 401 afterwards", async () => {
    const admin = await createAccount(server, owner.token, { role: 'admin' })
    const key = await createKey(admin.token, ['system/users:read'])
    await race(
      gate.hold('api_key'),
      () => listUsers(key.raw),
      () => server.request('PATCH', `/api/v1/users/${admin.id}`, { token: owner.token, body: { banned: true } }),
    )
    expect((await listUsers(key.raw)).status).toBe(401)
  })
})

describe('sessions: expiry, cached or not (SESSION_TTL_SECONDS=60, a clock the test moves)', () => {
  let offsetMs = 0
  const clock = {
    ...systemClock,
    now: () => Date.now() + offsetMs,
    seconds: () => Math.floor((Date.now() + offsetMs) / 1000),
  }
  let timed: TestServer
  let timedOwner: Account

  beforeAll(async () => {
    timed = await startServer({ SESSION_TTL_SECONDS: '60' }, { clock })
    timedOwner = await signUpOwner(timed)
  })
  afterAll(async () => {
    await timed?.stop()
  })

  it('a token is 401 once expired, whether it was cached (used before) or is used for the first time', async () => {
    const used = await createAccount(timed, timedOwner.token, { role: 'viewer' })
    const unused = await createAccount(timed, timedOwner.token, { role: 'viewer' })
    expect((await timed.request('GET', '/api/auth/get-session', { token: used.token })).status).toBe(200)
    offsetMs += 61_000
    for (const token of [used.token, used.token, unused.token, unused.token]) {
      const reply = await timed.request('GET', '/api/auth/get-session', { token })
      expect(reply.status, reply.text).toBe(401)
      expect(reply.body.error).toBe('unauthorized')
    }
  })
})
