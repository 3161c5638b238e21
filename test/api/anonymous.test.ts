import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { principals } from '../../src/lib/principal.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { setGrants, signUpOwner, type Account } from '../support/identity.js'
import { operations, type Operation } from '../support/route-table.js'

// Decision 012: a request without a credential is 401 `unauthorized` everywhere except on the operations
// below and on what the `public` role is granted (or a collection with the `public` preset). The route
// table is read from the OpenAPI document, so a new route that forgets its permission is caught here.

/** The operations anyone may call without a credential: sign-in and recovery, health, the docs, signed storage URLs, flow webhooks. */
const publicOperations = new Set([
  'system.health',
  'system.healthVersioned',
  'system.openapi',
  'system.openapiVersioned',
  'system.llmContext',
  'system.docs',
  'system.docsAsset',
  'storage.putObject',
  'storage.getObject',
  'auth.capabilities',
  'auth.signUpEmail',
  'auth.signInEmail',
  'auth.signInUsername',
  'auth.isUsernameAvailable',
  'auth.requestPasswordReset',
  'auth.resetPassword',
  'auth.resetPasswordPage',
  'auth.magicLink',
  'auth.magicLinkVerify',
  'auth.twoFactorVerify',
  'auth.signInSocial',
  'auth.socialCallback',
  // Automation triggers: a webhook is public unless its flow requires the shared secret; an api_endpoint
  // flow decides with require_auth (unknown ids are 404 either way).
  ...['get', 'post', 'put', 'patch', 'delete'].flatMap((method) => [
    `automateWebhook.${method}`,
    `automateEndpoint.${method}`,
  ]),
  // Email delivery receipts: public, but refused (401) unless signed with EMAIL_RECEIPT_SECRET.
  'emailReceipts.create',
])

let server: TestServer
let owner: Account
let table: Operation[]
let memoId: string

const call = (method: string, path: string, token?: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, body })
const fields = [
  { name: 'title', type: 'text', required: false },
  { name: 'mood', type: 'enum', required: false, enumValues: ['calm', 'busy'] },
]

async function collection(name: string, accessControl?: unknown): Promise<string> {
  const reply = await call('POST', '/api/v1/collections', owner.token, {
    name,
    fields,
    ...(accessControl ? { accessControl } : {}),
  })
  expect(reply.status, reply.text).toBe(201)
  const record = await call('POST', `/api/v1/collections/${name}/records`, owner.token, {
    title: `${name} secret`,
    mood: 'calm',
  })
  expect(record.status, record.text).toBe(201)
  return record.body.id
}

/** A request for one operation, its path parameters filled: `name` with the collection, `id` with a record. */
function requestFor(op: Operation, name: string): { method: string; path: string; body?: unknown } {
  const values: Record<string, string> = { name, id: memoId, field: 'mood' }
  const path = op.path.replace(/\{(\w+)\}/g, (_, param: string) => values[param] ?? 'x1')
  return { method: op.method, path, ...(op.method === 'GET' ? {} : { body: {} }) }
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  table = await operations(server)
  memoId = await collection('memos', { preset: 'team', sharing: true })
})
afterAll(async () => {
  await server?.stop()
})

describe('the route table as an anonymous caller', () => {
  it('names every public operation the allowlist holds (the list cannot go stale)', () => {
    const ids = new Set(table.map((op) => op.operationId))
    for (const id of publicOperations) expect(ids.has(id), id).toBe(true)
    expect(table.length).toBeGreaterThan(publicOperations.size + 50)
  })

  for (const [label, name] of [
    ['an existing collection', 'memos'],
    ['a collection that does not exist', 'no_such_collection'],
  ] as const) {
    it(`every other operation is 401 unauthorized, on ${label}`, async () => {
      const wrong: string[] = []
      for (const op of table) {
        if (publicOperations.has(op.operationId)) continue
        const { method, path, body } = requestFor(op, name)
        const reply = await call(method, path, undefined, body)
        if (reply.status !== 401 || reply.body?.error !== 'unauthorized')
          wrong.push(`${op.operationId} ${method} ${path} → ${reply.status} ${reply.text.slice(0, 120)}`)
      }
      expect(wrong).toEqual([])
    })
  }

  it('nothing of the collection leaked and nothing was written', async () => {
    const stored = await call('GET', '/api/v1/collections/memos/records', owner.token)
    expect(stored.status).toBe(200)
    expect(stored.body.data.map((r: any) => r.title)).toEqual(['memos secret'])
    expect((await call('GET', '/api/v1/collections', owner.token)).body.data.map((c: any) => c.name)).toEqual(['memos'])
  })

  it('the services refuse an anonymous caller on their own, outside HTTP', async () => {
    const projectId = server.app.defaultProject.id
    const anonymous = principals.anonymous(projectId)
    for (const name of ['memos', 'no_such_collection']) {
      await expect(server.app.records.list(anonymous, name, { page: 1, limit: 10 })).rejects.toMatchObject({
        code: 'unauthorized',
      })
      await expect(server.app.records.get(anonymous, name, memoId, {})).rejects.toMatchObject({ code: 'unauthorized' })
      await expect(server.app.records.create(anonymous, name, { title: 'anonymous' })).rejects.toMatchObject({
        code: 'unauthorized',
      })
    }
  })
})

describe('what public may read works without a credential', () => {
  let openId: string
  let grantedId: string
  beforeAll(async () => {
    openId = await collection('bulletin', { preset: 'public' })
    grantedId = await collection('catalog')
    await collection('ledger')
    await setGrants(server, owner.token, 'public', [{ resource: 'collections/catalog', action: 'read' }])
  })

  it('the list of collections names exactly those open to public', async () => {
    const reply = await call('GET', '/api/v1/collections')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.map((c: any) => c.name).sort()).toEqual(['bulletin', 'catalog'])
  })

  it.each([
    ['preset public', 'bulletin', () => openId],
    ['granted to public', 'catalog', () => grantedId],
  ])('a collection %s: its definition, options, records and one record answer 200', async (_, name, id) => {
    const definition = await call('GET', `/api/v1/collections/${name}`)
    expect(definition.status, definition.text).toBe(200)
    expect(definition.body.data.name).toBe(name)
    expect((await call('GET', `/api/v1/collections/${name}/fields/mood/options`)).status).toBe(200)
    const list = await call('GET', `/api/v1/collections/${name}/records`)
    expect(list.status, list.text).toBe(200)
    expect(list.body.data.map((r: any) => r.title)).toEqual([`${name} secret`])
    const one = await call('GET', `/api/v1/collections/${name}/records/${id()}`)
    expect(one.status, one.text).toBe(200)
    expect(one.body.data.title).toBe(`${name} secret`)
  })

  it('reading is all they open: writes and the other collections stay 401, and nothing is written', async () => {
    for (const name of ['bulletin', 'catalog']) {
      const created = await call('POST', `/api/v1/collections/${name}/records`, undefined, { title: 'from nobody' })
      expect(created.status, created.text).toBe(401)
      expect((await call('GET', `/api/v1/collections/${name}/records/x1/shares`)).status).toBe(401)
    }
    for (const path of [
      '/api/v1/collections/ledger',
      '/api/v1/collections/ledger/records',
      '/api/v1/collections/memos/records',
      '/api/v1/collections/nothing_here/records',
    ]) {
      const reply = await call('GET', path)
      expect(reply.status, path).toBe(401)
      expect(reply.text).not.toContain('secret')
    }
    for (const name of ['bulletin', 'catalog']) {
      const stored = await call('GET', `/api/v1/collections/${name}/records`, owner.token)
      expect(stored.body.data.map((r: any) => r.title)).toEqual([`${name} secret`])
    }
  })

  it('a collection public is granted but that does not exist is 404, not 401', async () => {
    await setGrants(server, owner.token, 'public', [
      { resource: 'collections/catalog', action: 'read' },
      { resource: 'collections/upcoming', action: 'read' },
    ])
    const reply = await call('GET', '/api/v1/collections/upcoming/records')
    expect(reply.status, reply.text).toBe(404)
    expect(reply.body.error).toBe('collection_not_found')
  })
})

describe('a project that opens nothing to public', () => {
  it('answers the list of collections with 401, even where collections exist', async () => {
    const project = await call('POST', '/api/v1/projects', owner.token, { name: 'Closed shop' })
    expect(project.status, project.text).toBe(201)
    const there = { 'X-Project-Id': project.body.data.id }
    const made = await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      headers: there,
      body: { name: 'orders', fields },
    })
    expect(made.status, made.text).toBe(201)
    const reply = await server.request('GET', '/api/v1/collections', { headers: there })
    expect(reply.status, reply.text).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
  })
})
