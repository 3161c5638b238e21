import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer as Receiver } from '../../src/lib/outbound/test-servers.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants, uniqueName } from './collections-support.js'

/**
 * Stored credentials never follow a target their updater can change without seeing them (issue 25,
 * finding 6 and its class; decision 048), besides collection webhooks (webhooks-origin.test.ts):
 *
 * - a storage connection's secret key stays with the endpoint's origin: moving the endpoint to another
 *   scheme, host or port needs secretKey again (400 otherwise, nothing changed), so an updater cannot
 *   have the stored key sign requests (SigV4) for a server of theirs;
 * - a database binding's URL, password included, is set once: no route changes it.
 *
 * ALLOW_PRIVATE_NETWORK is on: the "store" and the attacker's server are both on 127.0.0.1, two origins.
 */

const BASE = '/api/v1/storage-connections'
const ACCESS_KEY_ID = 'AKIDSTORED'
const SECRET = `sc-secret-${randomBytes(12).toString('hex')}`
const NEW_SECRET = `sc-new-${randomBytes(12).toString('hex')}`

let server: TestServer
let store: Receiver
let attacker: Receiver
let owner: Account

const sealedSecret = async (id: string): Promise<unknown> =>
  (
    await server.app.registry.system.db
      .selectFrom('storage_connections')
      .select('secret_key_sealed')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).secret_key_sealed

async function connection(): Promise<string> {
  const made = await server.request('POST', BASE, {
    token: owner.token,
    body: {
      label: uniqueName('archive'),
      endpoint: store.origin,
      bucketName: 'plinth-bucket',
      accessKeyId: ACCESS_KEY_ID,
      secretKey: SECRET,
    },
  })
  expect(made.status, made.text).toBe(201)
  return made.body.data.id
}

/** The role that could move a connection: read and update of storage connections, nothing else. */
const updater = () =>
  accountWithGrants(server, owner.token, [
    { resource: 'system/storage-connections', action: 'read' },
    { resource: 'system/storage-connections', action: 'update' },
  ])

beforeAll(async () => {
  // Not S3: what matters is who receives a signed request, not what it answers.
  store = await startTestServer((_req, res) => void res.writeHead(404).end())
  attacker = await startTestServer((_req, res) => void res.writeHead(404).end())
  server = await startServer({ ALLOW_PRIVATE_NETWORK: 'true' })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
  await store?.close()
  await attacker?.close()
})

describe('a storage connection moved to another origin needs its secret key again', () => {
  it('the attack: an updater moves the endpoint to their server without the key: 400, nothing changed, no signed request reaches them', async () => {
    const id = await connection()
    const mallory = await updater()
    const before = await sealedSecret(id)
    for (const endpoint of [attacker.origin, `${attacker.origin}/path`, store.origin.replace('http:', 'https:')]) {
      const moved = await server.request('PUT', `${BASE}/${id}`, { token: mallory.token, body: { endpoint } })
      expect(moved.status, moved.text).toBe(400)
      expect(moved.body).toMatchObject({ error: 'invalid_request', details: { fields: ['secretKey'] } })
    }
    expect((await server.request('GET', `${BASE}/${id}`, { token: mallory.token })).body.data.endpoint).toBe(
      store.origin,
    )
    expect(await sealedSecret(id)).toBe(before)
    // The connection test signs with the stored key: it still goes to the store, never to the attacker.
    const tested = await server.request('POST', `${BASE}/${id}/test`, { token: mallory.token })
    expect(tested.status, tested.text).toBe(200)
    expect(attacker.received).toEqual([])
    expect(store.received.at(-1)?.headers.authorization).toContain(`Credential=${ACCESS_KEY_ID}/`)
  })

  it('the same PUT with secretKey moves it: the new endpoint gets requests signed with the new key', async () => {
    const id = await connection()
    const before = await sealedSecret(id)
    const moved = await server.request('PUT', `${BASE}/${id}`, {
      token: owner.token,
      body: { endpoint: `${attacker.origin}/elsewhere`, secretKey: NEW_SECRET },
    })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.data.endpoint).toBe(`${attacker.origin}/elsewhere`)
    expect(await sealedSecret(id)).not.toBe(before)
    await server.request('POST', `${BASE}/${id}/test`, { token: owner.token })
    expect(attacker.received.at(-1)?.path).toMatch(/^\/elsewhere\//)
    attacker.received.length = 0
  })

  it('a change of path only (same origin) keeps the stored key', async () => {
    const id = await connection()
    const before = await sealedSecret(id)
    const moved = await server.request('PUT', `${BASE}/${id}`, {
      token: (await updater()).token,
      body: { endpoint: `${store.origin}/prefix/` },
    })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.data.endpoint).toBe(`${store.origin}/prefix`)
    expect(await sealedSecret(id)).toBe(before)
  })
})

describe('a database binding', () => {
  it('has no route that changes its URL: PATCH and PUT are not routes, the binding is as it was', async () => {
    const made = await server.request('POST', '/api/v1/databases', {
      token: owner.token,
      body: { name: uniqueName('side'), kind: 'sqlite' },
    })
    expect(made.status, made.text).toBe(201)
    for (const method of ['PATCH', 'PUT']) {
      const reply = await server.request(method, `/api/v1/databases/${made.body.data.id}`, {
        token: owner.token,
        body: { url: `postgres://u:p@${new URL(attacker.origin).host}/db` },
      })
      expect(reply.status, `${method}: ${reply.text}`).toBe(404)
    }
    const listed = await server.request('GET', '/api/v1/databases', { token: owner.token })
    expect(listed.body.data.find((b: { id: string }) => b.id === made.body.data.id)).toEqual(made.body.data)
    expect(attacker.received).toEqual([])
  })
})
