import { sql, type RawBuilder } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeTable, tableIdentifier, type DbHandle } from '../../src/lib/db/index.js'
import { keysetOrder } from '../../src/lib/filter/index.js'
import { documentSource } from '../../src/modules/collections/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, field, getCollection, readRecord, uniqueName } from './collections-support.js'

/**
 * storageType kv (decision 035): a key-value table, id → JSON document. What is particular to it: the
 * table holds the system columns and one document column, a new field changes no table, the document is
 * what is stored, and filters, sorts and search run in SQL on the JSON, served by expression indexes.
 * The records suites run on kv as a whole with TEST_STORAGE_TYPE=kv (docs/testing.md).
 */

let server: TestServer
let owner: Account
let handle: DbHandle

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  handle = await server.app.registry.get(server.app.defaultProject.id)
})
afterAll(async () => {
  await server?.stop()
})

const systemColumnNames = [
  '_version',
  'created_at',
  'created_by',
  'deleted_at',
  'id',
  'owned_by',
  'updated_at',
  'updated_by',
]
const post = (body: unknown) => server.request('POST', '/api/v1/collections', { token: owner.token, body })
const records = (name: string, query = '') => `/api/v1/collections/${name}/records${query}`
const listQuery = (filter: unknown, extra = '') => `?filter=${encodeURIComponent(JSON.stringify(filter))}${extra}`

function expectOk(reply: Reply, status = 200): void {
  expect(reply.status, reply.text).toBe(status)
}

/** The table's rows as stored, read directly. */
async function storedRows(name: string): Promise<Record<string, unknown>[]> {
  return (
    await sql<Record<string, unknown>>`select * from ${tableIdentifier(handle, name)} order by created_at, id`.execute(
      handle.db,
    )
  ).rows
}

const documentOf = (row: Record<string, unknown>): unknown =>
  typeof row.doc === 'string' ? JSON.parse(row.doc) : row.doc

const noteFields = [
  field('title', 'text', { required: true }),
  field('n', 'integer', { indexed: true }),
  field('done', 'boolean'),
  field('meta', 'json'),
  field('status', 'enum', { enumValues: ['draft', 'published'] }),
]

async function kv(name: string, fields = noteFields, extra: Record<string, unknown> = {}): Promise<any> {
  return createCollection(server, owner.token, { name, storageType: 'kv', fields, ...extra })
}

describe('storageType kv: a key-value table', () => {
  it('creates a table of the key, the system columns and one JSON document column, in the project database', async () => {
    const name = uniqueName('kv_notes')
    const created = await kv(name)
    expect(created).toMatchObject({ name, storageType: 'kv', databaseId: 'main' })
    const columns = (await describeTable(handle, name)).map((c) => c.name).sort()
    expect(columns).toEqual([...systemColumnNames, 'doc'].sort())
    // Each field is a key of the document: columnStatuses says so.
    const detail = await getCollection(server, owner.token, name)
    expect(detail.columnStatuses).toContainEqual({ name: 'title', exists: true, type: 'doc.title' })
  })

  it('stores a record as its JSON document (a null value is no key) and reads it back as on d1', async () => {
    const name = uniqueName('kv_doc')
    await kv(name)
    const created = await createRecord(server, owner.token, name, {
      title: 'Hello',
      n: 3,
      done: true,
      meta: { tags: ['a'], deep: { x: 1 } },
      status: null,
    })
    expect(created).toMatchObject({
      title: 'Hello',
      n: 3,
      done: true,
      meta: { tags: ['a'], deep: { x: 1 } },
      status: null,
      _version: 1,
    })
    const [row] = await storedRows(name)
    expect(row!.id).toBe(created.id)
    expect(documentOf(row!)).toEqual({ title: 'Hello', n: 3, done: true, meta: { tags: ['a'], deep: { x: 1 } } })
    // A patch rewrites only its keys; a null removes one; the other keys stay.
    const patched = await server.request('PATCH', records(name, `/${created.id}`), {
      token: owner.token,
      body: { n: 4, meta: null, status: 'published' },
    })
    expectOk(patched)
    expect(documentOf((await storedRows(name))[0]!)).toEqual({ title: 'Hello', n: 4, done: true, status: 'published' })
    expect(await readRecord(server, owner.token, name, created.id)).toMatchObject({
      title: 'Hello',
      n: 4,
      done: true,
      meta: null,
      status: 'published',
      _version: 2,
    })
  })

  it('validates every write against the declared fields', async () => {
    const name = uniqueName('kv_valid')
    await kv(name)
    const wrongType = await server.request('POST', records(name), {
      token: owner.token,
      body: { title: 'x', n: 'three' },
    })
    expect(wrongType.status).toBe(400)
    expect(wrongType.body.error).toBe('invalid_field')
    const missing = await server.request('POST', records(name), { token: owner.token, body: { n: 1 } })
    expect(missing.body.error).toBe('missing_field')
    const unknown = await server.request('POST', records(name), {
      token: owner.token,
      body: { title: 'x', colour: 'red' },
    })
    expect(unknown.status).toBe(400)
    expect(await storedRows(name)).toEqual([])
  })

  it('adding fields changes no table: the same columns before and after, and the new fields are written, filtered and sorted at once', async () => {
    const name = uniqueName('kv_grow')
    await kv(name)
    const before = await createRecord(server, owner.token, name, { title: 'old' })
    const columnsBefore = await describeTable(handle, name)
    const patch = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: {
        fields: [
          ...noteFields,
          field('colour', 'text'),
          field('weight', 'number'),
          field('label', 'text', { indexed: true }),
        ],
      },
    })
    expectOk(patch)
    expect(await describeTable(handle, name)).toEqual(columnsBefore)
    await createRecord(server, owner.token, name, { title: 'red one', colour: 'red', weight: 2.5, label: 'b' })
    await createRecord(server, owner.token, name, { title: 'blue one', colour: 'blue', weight: 1.5, label: 'a' })
    expect((await readRecord(server, owner.token, name, before.id)).colour).toBeNull()
    const red = await server.request('GET', records(name, listQuery({ colour: { _eq: 'red' } })), {
      token: owner.token,
    })
    expectOk(red)
    expect(red.body.data.map((r: any) => r.title)).toEqual(['red one'])
    const sorted = await server.request('GET', records(name, '?sortBy=-weight'), { token: owner.token })
    expect(sorted.body.data.map((r: any) => r.title)).toEqual(['red one', 'blue one', 'old'])
    // A new text field feeds search.
    const found = await server.request('GET', records(name, '?search=blu'), { token: owner.token })
    expectOk(found)
    expect(found.body.data.map((r: any) => r.title)).toEqual(['blue one'])
  })

  it('a unique field is a unique expression index: a duplicate is 409 already_exists naming the field', async () => {
    const name = uniqueName('kv_unique')
    await kv(name, [field('sku', 'text', { unique: true }), field('shape', 'json', { unique: true })])
    await createRecord(server, owner.token, name, { sku: 'A-1', shape: { k: 1 } })
    const dup = await server.request('POST', records(name), { token: owner.token, body: { sku: 'A-1' } })
    expect(dup.status, dup.text).toBe(409)
    expect(dup.body).toMatchObject({ error: 'already_exists', details: { fields: ['sku'] } })
    const dupJson = await server.request('POST', records(name), {
      token: owner.token,
      body: { sku: 'B-2', shape: { k: 1 } },
    })
    expect(dupJson.status, dupJson.text).toBe(409)
    expect(dupJson.body.details).toEqual({ fields: ['shape'] })
  })

  it('databaseId cannot be chosen, and a PATCH cannot move it', async () => {
    const name = uniqueName('kv_db')
    const chosen = await post({ name, storageType: 'kv', databaseId: 'elsewhere', fields: noteFields })
    expect(chosen.status).toBe(400)
    expect(chosen.body.error).toBe('invalid_request')
    await kv(name)
    const move = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: { fields: noteFields, storageType: 'd1' },
    })
    expect(move.status).toBe(400)
    expect(move.body.details).toMatchObject({ property: 'storageType', current: 'kv' })
  })

  it('deleting the collection drops its table and its search index', async () => {
    const name = uniqueName('kv_gone')
    await kv(name)
    await createRecord(server, owner.token, name, { title: 'x' })
    expectOk(await server.request('DELETE', `/api/v1/collections/${name}`, { token: owner.token }))
    expect(await describeTable(handle, name)).toEqual([])
    if (handle.kind === 'sqlite') {
      const left = await sql<{ name: string }>`select name from sqlite_master where name like ${`${name}%`}`.execute(
        handle.db,
      )
      expect(left.rows).toEqual([])
    } else {
      const left = await sql<{
        indexname: string
      }>`select indexname from pg_indexes where schemaname = ${handle.schema} and indexname like ${`${name}%`}`.execute(
        handle.db,
      )
      expect(left.rows).toEqual([])
    }
  })
})

describe('kv lists run in SQL on the JSON, served by expression indexes', () => {
  const name = uniqueName('kv_plan')
  let indexName: string
  let fields: any[]

  beforeAll(async () => {
    const created = await kv(
      name,
      [
        field('title', 'text'),
        field('status', 'enum', { enumValues: ['draft', 'published', 'archived'] }),
        field('views', 'integer'),
      ],
      {
        indexes: [{ fields: ['status', '-views'] }],
      },
    )
    indexName = created.indexes[0].name
    fields = created.fields
    for (let chunk = 0; chunk < 2; chunk++) {
      const lines = Array.from({ length: 1000 }, (_, i) => {
        const n = chunk * 1000 + i
        return JSON.stringify({
          title: `t${n} word${n % 10}`,
          status: ['draft', 'published', 'archived'][n % 3],
          views: (n * 7919) % 5000,
        })
      })
      const reply = await server.request('POST', records(name, '/import-ndjson'), {
        token: owner.token,
        rawBody: lines.join('\n'),
        headers: { 'content-type': 'application/x-ndjson' },
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.imported).toBe(1000)
    }
  })

  // What records/list.ts asks for `?limit=25&sortBy=-views&filter={"status":{"_eq":"published"}}` on a kv collection.
  const source = () => documentSource(handle, name, fields)
  const live = sql`deleted_at is null`
  const filter = () => sql`${sql.ref('status')} = ${sql.lit('published')}`
  const page = () =>
    sql`select * from ${source()} where ${live} and ${filter()} order by ${keysetOrder(sql.ref('views'), 'desc')} limit 25`
  const count = () => sql`select count(*) as n from ${source()} where ${live} and ${filter()}`

  async function plan(query: RawBuilder<unknown>): Promise<string> {
    if (handle.kind === 'sqlite') {
      const rows = await sql<{ detail: string }>`explain query plan ${query}`.execute(handle.db)
      return rows.rows.map((r) => r.detail).join('\n')
    }
    return handle.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx)
      const rows = await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx)
      return rows.rows.map((r) => r['QUERY PLAN']).join('\n')
    })
  }

  it('the filtered, sorted page walks the compound expression index in order: no table scan, no sort', async () => {
    const text = await plan(page())
    expect(text).toContain(indexName)
    if (handle.kind === 'sqlite') {
      expect(text).toMatch(new RegExp(`SEARCH .* USING INDEX ${indexName} \\(<expr>=\\?\\)`))
      expect(text).not.toMatch(/TEMP B-TREE/)
      expect(text).not.toMatch(/\bSCAN\b/)
    } else {
      expect(text).toMatch(new RegExp(`Index Scan(?: Backward)? using ${indexName} on`))
      expect(text).not.toMatch(/\bSort\b/)
      expect(text).not.toMatch(/Seq Scan/)
    }
  })

  it('the page-mode total is counted from the same index', async () => {
    const text = await plan(count())
    expect(text).toContain(indexName)
    expect(text).not.toMatch(/Seq Scan|\bSCAN\b/)
  })

  it('the list answers what the plan promises; search finds words of the document', async () => {
    const first = await server.request(
      'GET',
      records(name, listQuery({ status: { _eq: 'published' } }, '&limit=25&sortBy=-views')),
      { token: owner.token },
    )
    expectOk(first)
    const views = first.body.data.map((r: { views: number }) => r.views)
    expect(views).toEqual([...views].sort((a: number, b: number) => b - a))
    expect(first.body.total).toBe(667)
    const found = await server.request('GET', records(name, '?search=word7&limit=1'), { token: owner.token })
    expectOk(found)
    expect(found.body.total).toBe(200)
  })

  it('search uses the search index (SQLite FTS5 fed from the document, PostgreSQL a GIN expression index)', async () => {
    const { searchCondition } = await import('../../src/modules/collections/index.js')
    const condition = searchCondition(handle, name, fields, 'word7', 'document')
    const text = await plan(sql`select id from ${source()} where ${live} and ${condition}`)
    if (handle.kind === 'sqlite') expect(text).toContain(`${name}__search VIRTUAL TABLE INDEX`)
    else expect(text).toMatch(/Bitmap Index Scan on \S*search__gin/)
  })
})
