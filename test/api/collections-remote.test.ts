import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeTable, tableIdentifier } from '../../src/lib/db/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import {
  createCollection,
  createRecord,
  field,
  getCollection,
  listedNames,
  readRecord,
  uniqueName,
} from './collections-support.js'

/**
 * storageType remote: a collection whose table lives in a registered database binding (sqlite always,
 * postgres when TEST_DATABASE_URL is set). The same suite runs on each kind of binding: records written
 * through the API land in that database (checked there directly) and read back; nothing lands in the
 * project's own database; delete drops the table there.
 */

let server: TestServer
let owner: Account
let pgTarget: { url: string; drop: () => Promise<void> } | null = null

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  if (testDatabaseUrl()) pgTarget = await createTestDatabase(testDatabaseUrl()!)
})
afterAll(async () => {
  await server?.stop()
  await pgTarget?.drop()
})

const projectId = () => server.app.defaultProject.id
const post = (body: unknown) => server.request('POST', '/api/v1/collections', { token: owner.token, body })

async function registerDatabase(body: Record<string, unknown>): Promise<string> {
  const reply = await server.request('POST', '/api/v1/databases', { token: owner.token, body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data.id
}

/** How a test looks into a binding's database without going through the records API. */
interface BindingProbe {
  /** Every row of the table, in no particular order. */
  rows(table: string): Promise<Record<string, unknown>[]>
  tableExists(table: string): Promise<boolean>
  /** Creates a table there behind the API's back. */
  squat(table: string): Promise<void>
  unsquat(table: string): Promise<void>
}

function registryProbe(databaseId: string): BindingProbe {
  const handle = () => server.app.registry.get(projectId(), databaseId)
  return {
    async rows(table) {
      const h = await handle()
      return (await sql<Record<string, unknown>>`select * from ${tableIdentifier(h, table)}`.execute(h.db)).rows
    },
    tableExists: async (table) => (await describeTable(await handle(), table)).length > 0,
    async squat(table) {
      const h = await handle()
      await sql`create table ${tableIdentifier(h, table)} (x text)`.execute(h.db)
    },
    async unsquat(table) {
      const h = await handle()
      await sql`drop table ${tableIdentifier(h, table)}`.execute(h.db)
    },
  }
}

/** A plain pg client on the target database: what is there, whoever put it there. */
function pgProbe(url: string): BindingProbe {
  async function query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query<R>(text, values)).rows
    } finally {
      await client.end()
    }
  }
  const ident = (name: string) => {
    expect(name).toMatch(/^[a-z][a-z0-9_]*$/)
    return `public."${name}"`
  }
  return {
    rows: (table) => query(`select * from ${ident(table)}`),
    tableExists: async (table) =>
      (
        await query('select 1 from information_schema.tables where table_schema = $1 and table_name = $2', [
          'public',
          table,
        ])
      ).length > 0,
    squat: async (table) => void (await query(`create table ${ident(table)} (x text)`)),
    unsquat: async (table) => void (await query(`drop table ${ident(table)}`)),
  }
}

const kinds: {
  kind: 'sqlite' | 'postgres'
  enabled: () => boolean
  register: () => Promise<{ id: string; probe: BindingProbe }>
}[] = [
  {
    kind: 'sqlite',
    enabled: () => true,
    async register() {
      const id = await registerDatabase({ name: uniqueName('lite'), kind: 'sqlite' })
      return { id, probe: registryProbe(id) }
    },
  },
  {
    kind: 'postgres',
    enabled: () => testDatabaseUrl() !== null,
    async register() {
      const id = await registerDatabase({ name: uniqueName('pg'), kind: 'postgres', url: pgTarget!.url })
      return { id, probe: pgProbe(pgTarget!.url) }
    },
  },
]

for (const { kind, enabled, register } of kinds) {
  describe.runIf(enabled())(`storageType remote on a ${kind} binding`, () => {
    let databaseId: string
    let probe: BindingProbe
    beforeAll(async () => {
      ;({ id: databaseId, probe } = await register())
    })

    it('creates the collection there: 201 with storageType remote and the databaseId', async () => {
      const name = uniqueName('remote_notes')
      const reply = await post({
        name,
        storageType: 'remote',
        databaseId,
        fields: [
          field('title', 'text', { required: true }),
          field('n', 'integer'),
          field('done', 'boolean'),
          field('meta', 'json'),
        ],
      })
      expect(reply.status, reply.text).toBe(201)
      expect(reply.body.data).toMatchObject({ name, storageType: 'remote', databaseId, schemaVersion: 1 })
      expect(await probe.tableExists(name)).toBe(true)
      const main = await server.app.registry.get(projectId())
      expect(await describeTable(main, name)).toEqual([])
      const detail = await getCollection(server, owner.token, name)
      expect(detail).toMatchObject({ storageType: 'remote', databaseId, policyKey: `collections/${name}` })
      expect(detail.columnStatuses.map((c: { name: string; exists: boolean }) => [c.name, c.exists])).toEqual(
        [
          'id',
          'created_at',
          'updated_at',
          'created_by',
          'updated_by',
          'deleted_at',
          '_version',
          'owned_by',
          'title',
          'n',
          'done',
          'meta',
        ].map((c) => [c, true]),
      )
    })

    it('records written through the API land in that database and read back the same', async () => {
      const name = uniqueName('remote_items')
      await createCollection(server, owner.token, {
        name,
        storageType: 'remote',
        databaseId,
        fields: [
          field('title', 'text', { required: true }),
          field('n', 'integer'),
          field('done', 'boolean'),
          field('meta', 'json'),
        ],
      })
      const a = await createRecord(server, owner.token, name, { title: 'alpha', n: 1, done: true, meta: { k: [1, 2] } })
      const b = await createRecord(server, owner.token, name, { title: 'beta', n: 2, done: false })
      expect(a).toMatchObject({ title: 'alpha', n: 1, done: true, meta: { k: [1, 2] }, _version: 1 })

      const stored = await probe.rows(name)
      expect(stored.map((r) => [r.id, r.title, Number(r.n)] as const).sort((x, y) => x[2] - y[2])).toEqual([
        [a.id, 'alpha', 1],
        [b.id, 'beta', 2],
      ])

      expect(await readRecord(server, owner.token, name, a.id)).toEqual(a)
      const listed = await server.request(
        'GET',
        `/api/v1/collections/${name}/records?sortBy=n&order=asc&filter=${encodeURIComponent(JSON.stringify({ done: { _eq: true } }))}`,
        { token: owner.token },
      )
      expect(listed.status, listed.text).toBe(200)
      expect(listed.body).toMatchObject({ total: 1, data: [a] })
      const found = await server.request('GET', `/api/v1/collections/${name}/records?search=beta`, {
        token: owner.token,
      })
      expect(found.status, found.text).toBe(200)
      expect(found.body.data.map((r: { id: string }) => r.id)).toEqual([b.id])

      const updated = await server.request('PATCH', `/api/v1/collections/${name}/records/${b.id}`, {
        token: owner.token,
        body: { title: 'gamma' },
      })
      expect(updated.status, updated.text).toBe(200)
      expect((await probe.rows(name)).map((r) => r.title).sort()).toEqual(['alpha', 'gamma'])
      const removed = await server.request('DELETE', `/api/v1/collections/${name}/records/${a.id}?permanent=true`, {
        token: owner.token,
      })
      expect(removed.status, removed.text).toBe(200)
      expect((await probe.rows(name)).map((r) => r.id)).toEqual([b.id])
    })

    it('a unique field refuses a duplicate there (409), and PATCH adds a column there', async () => {
      const name = uniqueName('remote_codes')
      const created = await createCollection(server, owner.token, {
        name,
        storageType: 'remote',
        databaseId,
        fields: [field('code', 'text', { unique: true })],
      })
      await createRecord(server, owner.token, name, { code: 'A' })
      const dup = await server.request('POST', `/api/v1/collections/${name}/records`, {
        token: owner.token,
        body: { code: 'A' },
      })
      expect(dup.status).toBe(409)
      expect(dup.body.error).toBe('already_exists')
      const patched = await server.request('PATCH', `/api/v1/collections/${name}`, {
        token: owner.token,
        body: { fields: [...created.fields, field('extra', 'decimal')] },
      })
      expect(patched.status, patched.text).toBe(200)
      expect((await getCollection(server, owner.token, name)).columnStatuses.at(-1)).toMatchObject({
        name: 'extra',
        exists: true,
      })
      const r = await createRecord(server, owner.token, name, { code: 'B', extra: 2.5 })
      expect(r.extra).toBe(2.5)
      expect((await probe.rows(name)).map((row) => row.code).sort()).toEqual(['A', 'B'])
    })

    it('a d1 collection looks up a field of a remote one', async () => {
      const customers = uniqueName('remote_customers')
      await createCollection(server, owner.token, {
        name: customers,
        storageType: 'remote',
        databaseId,
        fields: [field('name', 'text')],
      })
      const orders = uniqueName('local_orders')
      await createCollection(server, owner.token, {
        name: orders,
        fields: [
          field('customer', 'relation', { relationConfig: { targetCollection: customers, relationType: 'belongsTo' } }),
          field('customer_name', 'lookup', { lookupConfig: { relationField: 'customer', targetField: 'name' } }),
        ],
      })
      const c = await createRecord(server, owner.token, customers, { name: 'Ada' })
      const o = await createRecord(server, owner.token, orders, { customer: c.id })
      expect(o.customer_name).toBe('Ada')
      const expanded = await readRecord(server, owner.token, orders, o.id, '?expand=customer')
      expect(expanded.customer).toMatchObject({ id: c.id, name: 'Ada' })
    })

    it('delete drops the table in that database; the same name then starts empty', async () => {
      const name = uniqueName('remote_gone')
      await createCollection(server, owner.token, {
        name,
        storageType: 'remote',
        databaseId,
        fields: [field('title', 'text')],
      })
      await createRecord(server, owner.token, name, { title: 'bye' })
      const reply = await server.request('DELETE', `/api/v1/collections/${name}`, { token: owner.token })
      expect(reply.status, reply.text).toBe(200)
      expect(await probe.tableExists(name)).toBe(false)
      await createCollection(server, owner.token, {
        name,
        storageType: 'remote',
        databaseId,
        fields: [field('title', 'text')],
      })
      expect(
        (await server.request('GET', `/api/v1/collections/${name}/records`, { token: owner.token })).body.total,
      ).toBe(0)
    })

    it('a table already there is 500 ddl_error and registers nothing', async () => {
      const name = uniqueName('remote_clash')
      await probe.squat(name)
      try {
        const reply = await post({ name, storageType: 'remote', databaseId, fields: [field('title', 'text')] })
        expect(reply.status, reply.text).toBe(500)
        expect(reply.body.error).toBe('ddl_error')
        expect(await listedNames(server, owner.token)).not.toContain(name)
      } finally {
        await probe.unsquat(name)
      }
    })
  })
}

describe('remote refusals', () => {
  it('a binding of another project is 404 not_found, and nothing is registered', async () => {
    const project = await server.request('POST', '/api/v1/projects', {
      token: owner.token,
      body: { name: uniqueName('elsewhere') },
    })
    expect(project.status, project.text).toBe(201)
    const elsewhere = await server.request('POST', '/api/v1/databases', {
      token: owner.token,
      headers: { 'x-project-id': project.body.data.id },
      body: { name: 'theirs', kind: 'sqlite' },
    })
    expect(elsewhere.status, elsewhere.text).toBe(201)
    const name = uniqueName('borrowed')
    const reply = await post({ name, storageType: 'remote', databaseId: elsewhere.body.data.id, fields: [] })
    expect(reply.status, reply.text).toBe(404)
    expect(reply.body).toMatchObject({ error: 'not_found' })
    expect(await listedNames(server, owner.token)).not.toContain(name)
  })

  it('an unknown databaseId is 404 not_found; no databaseId is 400; neither registers anything', async () => {
    const unknown = await post({
      name: 'remote_unknown',
      storageType: 'remote',
      databaseId: 'ffffffffffffffffffffffffffffffff',
      fields: [field('title', 'text')],
    })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('not_found')
    const oddId = await post({ name: 'remote_unknown', storageType: 'remote', databaseId: '../system', fields: [] })
    expect(oddId.status).toBe(404)
    expect(oddId.body.error).toBe('not_found')
    const none = await post({ name: 'remote_unknown', storageType: 'remote', fields: [field('title', 'text')] })
    expect(none.status).toBe(400)
    expect(none.body.error).toBe('invalid_request')
    expect(await listedNames(server, owner.token)).not.toContain('remote_unknown')
  })

  // remote names a registered binding; the project's own database (main) is d1's, and a collection
  // labelled remote while living there would misreport where its data is.
  it('the project database (main) is 400 invalid_request, and no table is made there', async () => {
    const name = uniqueName('rmain')
    const reply = await post({ name, storageType: 'remote', databaseId: 'main', fields: [field('title', 'text')] })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({ error: 'invalid_request', details: { databaseId: 'main' } })
    expect(await listedNames(server, owner.token)).not.toContain(name)
    expect(await describeTable(await server.app.registry.get(projectId()), name)).toEqual([])
  })
})
