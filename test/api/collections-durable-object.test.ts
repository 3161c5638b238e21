import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { sql, type KyselyPlugin } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeTable, tableIdentifier, type DatabaseRegistry } from '../../src/lib/db/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
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
 * storageType durable_object: a collection in a database of its own, which Plinth makes with the
 * collection and removes with it: `DATA_DIR/projects/<projectId>/collections/<collectionId>.db` in
 * embedded mode, schema `collection_<collectionId>` on PostgreSQL (the run with TEST_DATABASE_URL). The
 * records API works on it as on d1; each test looks into that database directly to see where rows landed.
 */

let server: TestServer
let owner: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

const projectId = () => server.app.defaultProject.id
const onPostgres = () => server.app.registry.kind === 'postgres'
const post = (body: unknown) => server.request('POST', '/api/v1/collections', { token: owner.token, body })
const records = (name: string, query = '') => `/api/v1/collections/${name}/records${query}`
const filterQuery = (filter: unknown) => `filter=${encodeURIComponent(JSON.stringify(filter))}`

/** Whether the collection's own database exists: its file, or its schema. */
async function ownDatabaseExists(s: TestServer, collectionId: string): Promise<boolean> {
  if (s.app.registry.kind === 'postgres') {
    const found = await sql`select 1 from pg_namespace where nspname = ${`collection_${collectionId}`}`.execute(
      s.app.registry.system.db,
    )
    return found.rows.length > 0
  }
  return existsSync(join(s.dataDir, 'projects', s.app.defaultProject.id, 'collections', `${collectionId}.db`))
}

/** Every own database there is: the files of the project's collections directory (with -wal, -shm), or the collection_ schemas. */
async function ownDatabases(s: TestServer): Promise<string[]> {
  if (s.app.registry.kind === 'postgres') {
    const found = await sql<{
      nspname: string
    }>`select nspname from pg_namespace where nspname like 'collection\\_%' order by nspname`.execute(
      s.app.registry.system.db,
    )
    return found.rows.map((r) => r.nspname)
  }
  const dir = join(s.dataDir, 'projects', s.app.defaultProject.id, 'collections')
  return existsSync(dir) ? readdirSync(dir).sort() : []
}

/** The rows of the collection's table in its own database, read there directly. */
async function storedRows(
  s: TestServer,
  collection: { name: string; databaseId: string },
): Promise<Record<string, unknown>[]> {
  const handle = await s.app.registry.get(s.app.defaultProject.id, collection.databaseId)
  return (
    await sql<Record<string, unknown>>`select * from ${tableIdentifier(handle, collection.name)}`.execute(handle.db)
  ).rows
}

const noteFields = [
  field('title', 'text', { required: true }),
  field('n', 'integer', { indexed: true }),
  field('done', 'boolean'),
  field('meta', 'json'),
]

async function durable(name: string, fields = noteFields, extra: Record<string, unknown> = {}): Promise<any> {
  return createCollection(server, owner.token, { name, storageType: 'durable_object', fields, ...extra })
}

function expectOk(reply: Reply, status = 200): void {
  expect(reply.status, reply.text).toBe(status)
}

describe('storageType durable_object', () => {
  it('creates the collection in a database of its own: 201, databaseId collection_<id>, the file or schema there, nothing in the project database', async () => {
    const name = uniqueName('do_notes')
    const reply = await post({ name, storageType: 'durable_object', fields: noteFields })
    expectOk(reply, 201)
    const created = reply.body.data
    expect(created).toMatchObject({
      name,
      storageType: 'durable_object',
      databaseId: `collection_${created.id}`,
      schemaVersion: 1,
    })
    expect(await ownDatabaseExists(server, created.id)).toBe(true)
    const own = await server.app.registry.get(projectId(), created.databaseId)
    expect((await describeTable(own, name)).map((c) => c.name)).toContain('title')
    expect(own.schema).toBe(onPostgres() ? `collection_${created.id}` : null)
    expect(await describeTable(await server.app.registry.get(projectId()), name)).toEqual([])
    const detail = await getCollection(server, owner.token, name)
    expect(detail).toMatchObject({ storageType: 'durable_object', databaseId: created.databaseId })
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
    // A client sending back what it read may PATCH with the same storageType and databaseId; another one is refused.
    const same = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: { ...detail, fields: [...detail.fields, field('extra', 'text')] },
    })
    expectOk(same)
    expect((await describeTable(own, name)).map((c) => c.name)).toContain('extra')
    const moved = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: { fields: detail.fields, databaseId: 'main' },
    })
    expect(moved.status).toBe(400)
    expect(moved.body).toMatchObject({
      error: 'invalid_request',
      details: { property: 'databaseId', current: created.databaseId },
    })
  })

  it("refuses a chosen databaseId (400), and remote cannot borrow another collection's own database (404); neither registers anything", async () => {
    const before = await ownDatabases(server)
    const chosen = await post({
      name: uniqueName('do_chosen'),
      storageType: 'durable_object',
      databaseId: 'main',
      fields: [],
    })
    expect(chosen.status, chosen.text).toBe(400)
    expect(chosen.body).toMatchObject({ error: 'invalid_request', details: { databaseId: 'main' } })
    const host = await durable(uniqueName('do_host'))
    const borrower = uniqueName('do_borrower')
    const borrowed = await post({
      name: borrower,
      storageType: 'remote',
      databaseId: host.databaseId,
      fields: [field('title', 'text')],
    })
    expect(borrowed.status, borrowed.text).toBe(404)
    expect(borrowed.body.error).toBe('not_found')
    expect(await listedNames(server, owner.token)).not.toContain(borrower)
    expect(await describeTable(await server.app.registry.get(projectId(), host.databaseId), borrower)).toEqual([])
    // Only the host's database was made.
    const made = (await ownDatabases(server)).filter((n) => !before.includes(n))
    expect(made.filter((n) => !n.endsWith('-wal') && !n.endsWith('-shm'))).toEqual([
      onPostgres() ? host.databaseId : `${host.id}.db`,
    ])
  })

  it('CRUD, list with filter, sort and total, search, soft delete and restore: rows land in its own database', async () => {
    const name = uniqueName('do_items')
    const collection = await durable(name)
    const a = await createRecord(server, owner.token, name, {
      title: 'alpha apple',
      n: 1,
      done: true,
      meta: { k: [1, 2] },
    })
    const b = await createRecord(server, owner.token, name, { title: 'beta banana', n: 2, done: false })
    const c = await createRecord(server, owner.token, name, { title: 'gamma apple', n: 3, done: true })
    expect(a).toMatchObject({ title: 'alpha apple', n: 1, done: true, meta: { k: [1, 2] }, _version: 1 })
    expect((await storedRows(server, collection)).map((r) => r.id).sort()).toEqual([a.id, b.id, c.id].sort())
    expect(await readRecord(server, owner.token, name, a.id)).toEqual(a)

    const listed = await server.request(
      'GET',
      records(name, `?sortBy=n&order=desc&${filterQuery({ done: { _eq: true } })}`),
      { token: owner.token },
    )
    expectOk(listed)
    expect(listed.body).toMatchObject({ total: 2, hasMore: false })
    expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([c.id, a.id])
    const found = await server.request('GET', records(name, '?search=apple&sortBy=n&order=asc'), { token: owner.token })
    expectOk(found)
    expect(found.body.data.map((r: { id: string }) => r.id)).toEqual([a.id, c.id])

    const updated = await server.request('PATCH', records(name, `/${b.id}`), {
      token: owner.token,
      body: { title: 'beta cherry', _version: 1 },
    })
    expectOk(updated)
    expect(updated.body).toMatchObject({ title: 'beta cherry', _version: 2 })
    const stale = await server.request('PATCH', records(name, `/${b.id}`), {
      token: owner.token,
      body: { title: 'lost', _version: 1 },
    })
    expect(stale.status, stale.text).toBe(409)
    expect((await storedRows(server, collection)).find((r) => r.id === b.id)).toMatchObject({ title: 'beta cherry' })
    // The search index follows the update.
    const cherry = await server.request('GET', records(name, '?search=cherry'), { token: owner.token })
    expect(cherry.body.data.map((r: { id: string }) => r.id)).toEqual([b.id])

    const softly = await server.request('DELETE', records(name, `/${a.id}`), { token: owner.token })
    expectOk(softly)
    expect(softly.body).toMatchObject({ success: true, permanent: false })
    expect((await server.request('GET', records(name, `/${a.id}`), { token: owner.token })).status).toBe(404)
    expect((await server.request('GET', records(name), { token: owner.token })).body.total).toBe(2)
    expect((await storedRows(server, collection)).find((r) => r.id === a.id)?.deleted_at).not.toBeNull()
    const withDeleted = await server.request('GET', records(name, '?include_deleted=true'), { token: owner.token })
    expect(withDeleted.body.total).toBe(3)
    expectOk(await server.request('POST', records(name, `/${a.id}/restore`), { token: owner.token }))
    expect((await readRecord(server, owner.token, name, a.id)).deleted_at).toBeNull()

    expectOk(await server.request('DELETE', records(name, `/${c.id}?permanent=true`), { token: owner.token }))
    expect((await storedRows(server, collection)).map((r) => r.id).sort()).toEqual([a.id, b.id].sort())
  })

  it('a unique field refuses a duplicate (409); a compound index is made there', async () => {
    const name = uniqueName('do_codes')
    const collection = await durable(
      name,
      [field('code', 'text', { unique: true }), field('zone', 'text'), field('rank', 'integer')],
      {
        indexes: [{ fields: ['zone', '-rank'] }],
      },
    )
    await createRecord(server, owner.token, name, { code: 'A', zone: 'x', rank: 1 })
    const dup = await server.request('POST', records(name), { token: owner.token, body: { code: 'A' } })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('already_exists')
    expect(await storedRows(server, collection)).toHaveLength(1)
  })

  it('import-ndjson stores its lines there, with per-line errors', async () => {
    const name = uniqueName('do_import')
    const collection = await durable(name, [
      field('title', 'text', { required: true }),
      field('code', 'text', { unique: true }),
    ])
    const body = [{ title: 'one', code: 'c1' }, { code: 'no title' }, { title: 'two', code: 'c1' }, { title: 'three' }]
      .map((l) => JSON.stringify(l))
      .join('\n')
    const reply = await server.request('POST', records(name, '/import-ndjson'), {
      token: owner.token,
      rawBody: body,
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expectOk(reply)
    expect(reply.body).toMatchObject({ imported: 2, failed: 2, total: 4, staleSearchIndexes: [] })
    expect(reply.body.errors.map((e: { line: number }) => e.line)).toEqual([2, 3])
    expect((await storedRows(server, collection)).map((r) => r.title).sort()).toEqual(['one', 'three'])
    expect((await server.request('GET', records(name, '?search=three'), { token: owner.token })).body.total).toBe(1)
  })

  it('truncate empties its table and keeps the collection', async () => {
    const name = uniqueName('do_trunc')
    const collection = await durable(name)
    for (const title of ['a', 'b', 'c']) await createRecord(server, owner.token, name, { title })
    const reply = await server.request('POST', `/api/v1/collections/${name}/truncate`, { token: owner.token })
    expectOk(reply)
    expect(reply.body).toMatchObject({ success: true, deleted: 3 })
    expect(await storedRows(server, collection)).toEqual([])
    expect((await server.request('GET', records(name), { token: owner.token })).body.total).toBe(0)
    expect(await ownDatabaseExists(server, collection.id)).toBe(true)
    await createRecord(server, owner.token, name, { title: 'after' })
  })

  it('answers ETags and 304; a write makes them stale', async () => {
    const name = uniqueName('do_etag')
    await durable(name)
    const r = await createRecord(server, owner.token, name, { title: 'x', n: 1 })
    for (const path of [records(name, '?sortBy=n'), records(name, `/${r.id}`)]) {
      const first = await server.request('GET', path, { token: owner.token })
      expectOk(first)
      const etag = first.headers.get('etag')
      expect(etag).toMatch(/^W\/"[\w-]+"$/)
      const again = await server.request('GET', path, { token: owner.token, headers: { 'if-none-match': etag! } })
      expect(again.status).toBe(304)
      expect(again.text).toBe('')
    }
    const listTag = (await server.request('GET', records(name, '?sortBy=n'), { token: owner.token })).headers.get(
      'etag',
    )!
    await createRecord(server, owner.token, name, { title: 'y', n: 2 })
    const after = await server.request('GET', records(name, '?sortBy=n'), {
      token: owner.token,
      headers: { 'if-none-match': listTag },
    })
    expectOk(after)
    expect(after.body.total).toBe(2)
    expect(after.headers.get('etag')).not.toBe(listTag)
  })

  it('relations across databases: a d1 collection looks up and expands a durable one, and a cascade reaches into it', async () => {
    const customers = uniqueName('do_customers')
    await durable(customers, [field('name', 'text')])
    const orders = uniqueName('do_orders')
    await createCollection(server, owner.token, {
      name: orders,
      fields: [
        field('customer', 'relation', {
          relationConfig: { targetCollection: customers, relationType: 'belongsTo', onDelete: 'cascade' },
        }),
        field('customer_name', 'lookup', { lookupConfig: { relationField: 'customer', targetField: 'name' } }),
      ],
    })
    const lines = uniqueName('do_lines')
    const linesCollection = await durable(lines, [
      field('order', 'relation', {
        relationConfig: { targetCollection: orders, relationType: 'belongsTo', onDelete: 'cascade' },
      }),
    ])
    const c = await createRecord(server, owner.token, customers, { name: 'Ada' })
    const o = await createRecord(server, owner.token, orders, { customer: c.id })
    expect(o.customer_name).toBe('Ada')
    expect((await readRecord(server, owner.token, orders, o.id, '?expand=customer')).customer).toMatchObject({
      id: c.id,
      name: 'Ada',
    })
    await createRecord(server, owner.token, lines, { order: o.id })
    const missing = await server.request('POST', records(lines), {
      token: owner.token,
      body: { order: 'f'.repeat(32) },
    })
    expect(missing.status, missing.text).toBe(422)
    // A permanent delete of the customer cascades to the order (d1) and on to its line (durable).
    expectOk(await server.request('DELETE', records(customers, `/${c.id}?permanent=true`), { token: owner.token }))
    expect((await server.request('GET', records(orders, `/${o.id}`), { token: owner.token })).status).toBe(404)
    expect(await storedRows(server, linesCollection)).toEqual([])
    // The durable collection cannot be deleted while the d1 one points at it.
    const refused = await server.request('DELETE', `/api/v1/collections/${customers}`, { token: owner.token })
    expect(refused.status).toBe(409)
  })

  it('deleting the collection removes its database; the same name then starts empty in a new one', async () => {
    const name = uniqueName('do_gone')
    const first = await durable(name)
    await createRecord(server, owner.token, name, { title: 'bye' })
    expectOk(await server.request('DELETE', `/api/v1/collections/${name}`, { token: owner.token }))
    expect(await ownDatabaseExists(server, first.id)).toBe(false)
    expect(await listedNames(server, owner.token)).not.toContain(name)
    await expect(server.app.registry.get(projectId(), first.databaseId)).rejects.toMatchObject({ code: 'not_found' })
    if (!onPostgres()) {
      const base = join(server.dataDir, 'projects', projectId(), 'collections', first.id)
      for (const suffix of ['.db', '.db-wal', '.db-shm']) expect(existsSync(`${base}${suffix}`)).toBe(false)
    }
    const second = await durable(name)
    expect(second.databaseId).not.toBe(first.databaseId)
    expect((await server.request('GET', records(name), { token: owner.token })).body.total).toBe(0)
  })
})

describe('durable_object: a create the database refuses', () => {
  let faulty: TestServer
  let faultyOwner: Account
  // CREATE TABLE fails inside a collection's own database, after the database itself was made.
  const refuseCreateTable: KyselyPlugin = {
    transformQuery(args) {
      if (args.node.kind === 'RawNode' && args.node.sqlFragments.join('').trimStart().startsWith('create table'))
        throw new Error('injected: disk quota exceeded')
      return args.node
    },
    transformResult: async (args) => args.result,
  }
  const withFault = (registry: DatabaseRegistry): DatabaseRegistry => ({
    ...registry,
    async createOwn(projectId, databaseId) {
      const handle = await registry.createOwn(projectId, databaseId)
      return { ...handle, db: handle.db.withPlugin(refuseCreateTable) }
    },
  })
  beforeAll(async () => {
    faulty = await startServer({}, { collectionDatabases: withFault })
    faultyOwner = await signUpOwner(faulty)
  })
  afterAll(async () => {
    await faulty?.stop()
  })

  it('is 500 ddl_error and leaves nothing: no registration, no file or schema', async () => {
    const before = await ownDatabases(faulty)
    const name = uniqueName('do_refused')
    const reply = await faulty.request('POST', '/api/v1/collections', {
      token: faultyOwner.token,
      body: { name, storageType: 'durable_object', fields: [field('title', 'text')] },
    })
    expect(reply.status, reply.text).toBe(500)
    expect(reply.body).toMatchObject({ error: 'ddl_error', details: { reason: expect.stringContaining('injected') } })
    expect(await listedNames(faulty, faultyOwner.token)).not.toContain(name)
    expect(await ownDatabases(faulty)).toEqual(before)
    // d1 is unaffected by the fault, and the name is free.
    await createCollection(faulty, faultyOwner.token, { name, fields: [field('title', 'text')] })
  })
})

describe('durable_object across a restart', () => {
  it("a new instance on the same DATA_DIR (and database) opens the collection's database lazily and finds its data", async () => {
    let instance = await startServer()
    try {
      const account = await signUpOwner(instance)
      const name = uniqueName('do_kept')
      const collection = await createCollection(instance, account.token, {
        name,
        storageType: 'durable_object',
        fields: noteFields,
      })
      const kept = await createRecord(instance, account.token, name, { title: 'kept across restarts', n: 7 })
      instance = await instance.restart()
      expect(await ownDatabaseExists(instance, collection.id)).toBe(true)
      const signedIn = await instance.request('POST', '/api/auth/sign-in/email', {
        body: { email: account.email, password: account.password },
      })
      expectOk(signedIn)
      const token = signedIn.body.token ?? signedIn.body.data?.token
      expect(await readRecord(instance, token, name, kept.id)).toEqual(kept)
      const found = await instance.request(
        'GET',
        records(name, `?search=restarts&${filterQuery({ n: { _gte: 7 } })}`),
        { token },
      )
      expect(found.body).toMatchObject({ total: 1, data: [kept] })
      const more = await createRecord(instance, token, name, { title: 'after', n: 8 })
      expect((await storedRows(instance, collection)).map((r) => r.id).sort()).toEqual([kept.id, more.id].sort())
    } finally {
      await instance.stop()
    }
  })
})
