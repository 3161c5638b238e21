import {
  createClient,
  ForbiddenError,
  localStorageTokenStore,
  MfaRequiredError,
  NetworkError,
  PlinthError,
  UnauthorizedError,
  ValidationError,
  type PlinthClient,
} from '@plinth/client'
import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startServer, type TestServer } from '../support/harness.js'
import { ticketsDefinition, type Collections } from './collections.fixture.js'

// Accounts through the SDK against a real server: sign-up, sign-in (two-factor's second step included),
// sign-out, the session, API keys, and errors as typed classes carrying the envelope's code and details.

let server: TestServer
let owner: PlinthClient<Collections>
const ownerAccount = { email: 'owner@example.com', password: 'owner password', name: 'Owner' }
beforeAll(async () => {
  server = await startServer()
  owner = createClient<Collections>({ url: server.url })
  await owner.auth.signUp(ownerAccount)
  await owner.transport.request('POST', '/api/v1/collections', { body: ticketsDefinition })
})
afterAll(async () => {
  await server?.stop()
})

// What an authenticator app computes: RFC 6238, SHA-1, 6 digits, 30 s.
const codeOf = (secret: string) =>
  new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate()

let counter = 0
/** A person the owner creates (as POST /api/v1/users), with a fresh client of their own. */
async function newPerson(role = 'editor') {
  const account = { email: `person${++counter}@example.com`, password: 'a good password' }
  await owner.transport.request('POST', '/api/v1/users', { body: { ...account, name: 'Person', role } })
  return { account, client: createClient<Collections>({ url: server.url }) }
}

describe('auth', () => {
  it('signs up, keeps the token in the store, reads the session and signs out', async () => {
    const session = await owner.auth.session()
    expect(session.user).toMatchObject({ email: ownerAccount.email, role: 'super_admin' })
    const { account, client } = await newPerson()
    expect(client.auth.signedIn).toBe(false)
    const signedIn = await client.auth.signIn(account)
    expect(signedIn.user.email).toBe(account.email)
    expect(client.transport.tokens.get()).toEqual({ token: signedIn.token })
    expect((await client.auth.session()).user.email).toBe(account.email)
    await client.auth.signOut()
    expect(client.auth.signedIn).toBe(false)
    // The session is over on the server too: its token no longer works.
    const reused = createClient({ url: server.url, tokens: { get: () => ({ token: signedIn.token }), set: () => {} } })
    await expect(reused.auth.session()).rejects.toBeInstanceOf(UnauthorizedError)
  })

  it('keeps a session in a Storage (localStorage in a browser) between clients', async () => {
    const { account } = await newPerson()
    const items = new Map<string, string>()
    const storage = {
      getItem: (k: string) => items.get(k) ?? null,
      setItem: (k: string, v: string) => void items.set(k, v),
      removeItem: (k: string) => void items.delete(k),
    }
    await createClient({ url: server.url, tokens: localStorageTokenStore('plinth.session', storage) }).auth.signIn(
      account,
    )
    expect(JSON.parse(items.get('plinth.session')!)).toEqual({ token: expect.any(String) })
    const later = createClient({ url: server.url, tokens: localStorageTokenStore('plinth.session', storage) })
    expect((await later.auth.session()).user.email).toBe(account.email)
    await later.auth.signOut()
    expect(items.has('plinth.session')).toBe(false)
  })

  it('a wrong password is an UnauthorizedError with the envelope code', async () => {
    const { account, client } = await newPerson()
    const err = await client.auth.signIn({ ...account, password: 'not it' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UnauthorizedError)
    expect(err).toBeInstanceOf(PlinthError)
    expect(err).toMatchObject({ status: 401, code: 'unauthorized', name: 'UnauthorizedError' })
    expect(client.auth.signedIn).toBe(false)
  })
})

describe('two-factor sign-in', () => {
  it('without a code is MfaRequiredError; the totp callback answers the second step', async () => {
    const { account, client } = await newPerson()
    await client.auth.signIn(account)
    const { secret } = await client.auth.totp.enroll()
    await client.auth.totp.confirm(codeOf(secret))
    await client.auth.signOut()

    const err = await client.auth.signIn(account).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(MfaRequiredError)
    expect(err).toBeInstanceOf(ForbiddenError)
    expect(err).toMatchObject({ status: 403, code: 'mfa_required' })
    expect(client.auth.signedIn).toBe(false)

    let asked = 0
    const signedIn = await client.auth.signIn(account, {
      totp: () => {
        asked++
        return codeOf(secret)
      },
    })
    expect(asked).toBe(1)
    expect(signedIn.user.email).toBe(account.email)
    expect((await client.auth.session()).user.email).toBe(account.email)
  })

  it('a wrong code is an UnauthorizedError, and the client stays signed out', async () => {
    const { account, client } = await newPerson()
    await client.auth.signIn(account)
    const { secret } = await client.auth.totp.enroll()
    await client.auth.totp.confirm(codeOf(secret))
    await client.auth.signOut()
    const good = codeOf(secret)
    const wrong = ['000000', '111111', '222222'].find((c) => c !== good)!
    await expect(client.auth.signIn({ ...account, code: wrong })).rejects.toBeInstanceOf(UnauthorizedError)
    expect(client.auth.signedIn).toBe(false)
  })
})

describe('API keys', () => {
  it('creates a key, a client with { apiKey } uses it, lists it, and a revoked key is refused', async () => {
    const created = await owner.auth.apiKeys.create({ label: 'reader', capabilities: ['collections/tickets:read'] })
    expect(created.raw.startsWith('sk-')).toBe(true)
    await owner.collection('tickets').create({ title: 'Seen by a key' })

    const keyed = createClient<Collections>({ url: server.url, apiKey: created.raw })
    const page = await keyed.collection('tickets').list({ filter: { title: 'Seen by a key' } })
    expect(page.data.map((t) => t.title)).toEqual(['Seen by a key'])
    // The key reads, and only reads.
    const write = await keyed
      .collection('tickets')
      .create({ title: 'no' })
      .catch((e: unknown) => e)
    expect(write).toBeInstanceOf(ForbiddenError)
    expect(write).toMatchObject({ status: 403, code: 'forbidden' })

    const listed = await owner.auth.apiKeys.list()
    expect(listed.find((k) => k.id === created.id)).toMatchObject({ label: 'reader' })
    expect(JSON.stringify(listed)).not.toContain(created.raw)

    await owner.auth.apiKeys.revoke(created.id)
    await expect(keyed.collection('tickets').list()).rejects.toBeInstanceOf(UnauthorizedError)
    expect((await owner.auth.apiKeys.list()).some((k) => k.id === created.id)).toBe(false)
  })
})

describe('errors', () => {
  it('carry the envelope details', async () => {
    const err = await owner.auth.apiKeys.create({ label: '', capabilities: [] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ValidationError)
    expect(err).toMatchObject({ status: 400, code: 'invalid_request' })
    expect((err as ValidationError).details).toMatchObject({
      issues: [expect.objectContaining({ location: 'body.label' })],
    })
  })

  it('a server that cannot be reached is a NetworkError with no status', async () => {
    const port = await freePort()
    const err = await createClient({ url: `http://127.0.0.1:${port}` })
      .auth.session()
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NetworkError)
    expect(err).toMatchObject({ status: null, code: 'unreachable' })
  })
})
