import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll, readRecord } from './records-fixtures.js'

/**
 * PATCH /api/v1/collections/:name changing an existing field's type, validationRules, unique and
 * relationConfig (docs/collections.md "Changing a collection", decision 060): each accepted change with the
 * rows kept and read back, each refusal with its counts and ids and nothing changed. Runs on the storage
 * type TEST_STORAGE_TYPE names (d1 unset) and on PostgreSQL with TEST_DATABASE_URL.
 */

let server: TestServer
let owner: Account
let viewer: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
})
afterAll(async () => {
  await server?.stop()
})

type Field = Record<string, unknown>
const f = (name: string, type: string, extra: Field = {}): Field => ({
  name,
  type,
  required: false,
  unique: false,
  indexed: false,
  ...extra,
})
const fieldsWith = (fields: Field[], name: string, change: Field) =>
  fields.map((each) => (each.name === name ? { ...each, ...change } : each))

const patch = (name: string, body: unknown, token = owner.token) =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token, body })
const definition = async (name: string) => {
  const reply = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data as { fields: Field[]; schemaVersion: number; indexes: unknown[] }
}
const fieldOf = async (name: string, field: string) => (await definition(name)).fields.find((x) => x.name === field)
// Soft-deleted records too: a change must keep them valid (they can be restored).
const byId = async (name: string) =>
  new Map((await listAll(server, owner.token, name, { include_deleted: true })).map((r) => [r.id, r]))
const write = (name: string, body: Record<string, unknown>) =>
  server.request('POST', `/api/v1/collections/${name}/records`, { token: owner.token, body })

/** A fresh collection with `fields` and a record per body; its name, fields, schemaVersion and ids. */
async function collection(prefix: string, fields: Field[], bodies: Record<string, unknown>[], extra: Field = {}) {
  const name = freshName(prefix)
  await createCollection(server, owner.token, name, fields, extra)
  const ids: string[] = []
  for (const body of bodies) ids.push((await createRecord(server, owner.token, name, body)).id as string)
  const stored = await definition(name)
  return { name, fields: stored.fields, schemaVersion: stored.schemaVersion, ids }
}

/** A refusal changed nothing: same definition, same schemaVersion, same rows (values and versions). */
async function expectUnchanged(
  name: string,
  before: Awaited<ReturnType<typeof definition>>,
  rows: Map<string, unknown>,
) {
  const now = await definition(name)
  expect(now.schemaVersion).toBe(before.schemaVersion)
  expect(now.fields).toEqual(before.fields)
  expect(await byId(name)).toEqual(rows)
}

/** On SQLite in the project database (d1): a column's declared type and the table's indexes and triggers; else null. */
async function sqliteTable(table: string, column: string) {
  const handle = await server.app.registry.get(server.app.defaultProject.id)
  if (handle.kind !== 'sqlite' || process.env.TEST_STORAGE_TYPE) return null
  const info = await sql<{ type: string }>`select type from pragma_table_info(${table}) where name = ${column}`.execute(
    handle.db,
  )
  const objects = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null
    order by name`.execute(handle.db)
  const stored = await sql<{
    t: string
  }>`select typeof(${sql.id(column)}) as t from ${sql.id(table)} where ${sql.id(column)} is not null`.execute(handle.db)
  return { type: info.rows[0]?.type, objects: objects.rows, storedAs: [...new Set(stored.rows.map((r) => r.t))] }
}

describe('text ↔ enum', () => {
  const statuses = ['open', 'closed', 'open', null]

  it('text → enum with every value in the list: 200, values kept, rows untouched, other values refused after', async () => {
    const t = await collection(
      'tx_enum',
      [f('title', 'text'), f('status', 'text', { indexed: true })],
      statuses.map((status, i) => ({ title: `t${i}`, status })),
    )
    const rows = await byId(t.name)
    const searched = async () => (await listAll(server, owner.token, t.name, { search: 'closed' })).map((r) => r.id)
    expect(await searched()).toEqual([t.ids[1]])
    const reply = await patch(t.name, {
      fields: fieldsWith(t.fields, 'status', { type: 'enum', enumValues: ['open', 'closed', 'waiting'] }),
    })
    expect(reply.status, reply.text).toBe(200)
    // An enum does not feed search: the search index was made again without it.
    expect(await searched()).toEqual([])
    expect(reply.body.data.schemaVersion).toBe(t.schemaVersion + 1)
    expect(await fieldOf(t.name, 'status')).toMatchObject({ type: 'enum', enumValues: ['open', 'closed', 'waiting'] })
    expect(await byId(t.name)).toEqual(rows)
    expectError(await write(t.name, { title: 'x', status: 'other' }), 400, 'invalid_field')
    expect((await write(t.name, { title: 'x', status: 'waiting' })).status).toBe(201)
    // The field's index still serves sorts and filters.
    const sorted = await listAll(server, owner.token, t.name, { sortBy: 'status', order: 'desc' })
    expect(sorted.map((r) => r.status)).toEqual(['waiting', 'open', 'open', 'closed', null])
  })

  it('text → enum with values outside the list: 409 with their count and ids, nothing changed', async () => {
    const t = await collection(
      'tx_enum_no',
      [f('status', 'text')],
      ['open', 'Closed', 'open', 'spam', null].map((status) => ({ status })),
    )
    await server.request('DELETE', `/api/v1/collections/${t.name}/records/${t.ids[3]}`, { token: owner.token })
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, {
      fields: fieldsWith(t.fields, 'status', { type: 'enum', enumValues: ['open', 'closed'] }),
    })
    expectError(reply, 409, 'conflict')
    // The soft-deleted "spam" counts: it can be restored.
    expect(reply.body.details).toEqual({
      field: 'status',
      records: 2,
      ids: [t.ids[1], t.ids[3]].sort(),
      from: 'text',
      to: 'enum',
    })
    expect(reply.body.message).toMatch(/2 records hold a value that is not a valid enum/)
    expect(reply.body.message).toMatch(/nothing was changed/)
    await expectUnchanged(t.name, before, rows)
  })

  it('enum → text: 200, values kept, any text writable, searchable from then on', async () => {
    const t = await collection(
      'enum_tx',
      [f('status', 'enum', { enumValues: ['open', 'closed'] })],
      [{ status: 'open' }, { status: 'closed' }, {}],
    )
    const rows = await byId(t.name)
    const fields = t.fields.map((x) => (x.name === 'status' ? { ...f('status', 'text'), label: 'State' } : x))
    const reply = await patch(t.name, { fields })
    expect(reply.status, reply.text).toBe(200)
    expect(await fieldOf(t.name, 'status')).toEqual({ ...f('status', 'text'), label: 'State' })
    expect(await byId(t.name)).toEqual(rows)
    const free = await write(t.name, { status: 'anything at all' })
    expect(free.status, free.text).toBe(201)
    const found = await listAll(server, owner.token, t.name, { search: 'closed' })
    expect(found.map((r) => r.id)).toEqual([t.ids[1]])
  })

  it('writes the type change to the audit log with the field before and after', async () => {
    const t = await collection('tx_audit', [f('status', 'text')], [{ status: 'open' }])
    const fields = fieldsWith(t.fields, 'status', { type: 'enum', enumValues: ['open'] })
    expect((await patch(t.name, { fields })).status).toBe(200)
    const log = await server.request('GET', '/api/v1/audit-log?action=collection.updated&limit=100', {
      token: owner.token,
    })
    expect(log.status, log.text).toBe(200)
    const entry = log.body.data.find((e: { details: { name: string } }) => e.details.name === t.name)
    expect(entry.details.changes).toEqual([
      {
        kind: 'type',
        field: 'status',
        before: expect.objectContaining({ type: 'text' }),
        after: expect.objectContaining({ type: 'enum', enumValues: ['open'] }),
      },
      {
        kind: 'enumValues',
        field: 'status',
        before: expect.objectContaining({ type: 'text' }),
        after: expect.objectContaining({ type: 'enum' }),
      },
    ])
  })

  it('names the first 20 ids of many refused records, in id order, and counts them all', async () => {
    const t = await collection(
      'tx_many',
      [f('code', 'text')],
      Array.from({ length: 23 }, (_, i) => ({ code: i === 0 ? 'a' : `x${i}` })),
    )
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'code', { type: 'enum', enumValues: ['a'] }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details.records).toBe(22)
    expect(reply.body.details.ids).toEqual(t.ids.slice(1).sort().slice(0, 20))
    expect(reply.body.message).toMatch(/22 records .* \(the first 20: /)
  })
})

describe('among text-like types and uuid', () => {
  it('text → richtext and back: 200, values kept, still searchable', async () => {
    const t = await collection('tx_rich', [f('body', 'text')], [{ body: 'zebra crossing' }, { body: '<b>x</b>' }])
    const rows = await byId(t.name)
    expect((await patch(t.name, { fields: fieldsWith(t.fields, 'body', { type: 'richtext' }) })).status).toBe(200)
    const back = await patch(t.name, { fields: t.fields })
    expect(back.status, back.text).toBe(200)
    expect(await byId(t.name)).toEqual(rows)
    const found = await listAll(server, owner.token, t.name, { search: 'zebra' })
    expect(found.map((r) => r.id)).toEqual([t.ids[0]])
  })

  it('text → email with values that are not addresses: 409 with the ids and the first reason', async () => {
    const t = await collection(
      'tx_email',
      [f('contact', 'text')],
      [{ contact: 'sam@example.com' }, { contact: 'call me' }],
    )
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'contact', { type: 'email' }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toMatchObject({ field: 'contact', records: 1, ids: [t.ids[1]] })
    expect(reply.body.message).toMatch(/must be an email address, got "call me"/)
    await expectUnchanged(t.name, before, rows)
  })

  it('text → url cannot smuggle in what a url write refuses (a javascript: URL): 409, nothing changed', async () => {
    const t = await collection(
      'tx_url',
      [f('link', 'text')],
      [{ link: 'https://example.com/a' }, { link: 'javascript:alert(1)' }],
    )
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'link', { type: 'url' }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toMatchObject({ records: 1, ids: [t.ids[1]] })
    await expectUnchanged(t.name, before, rows)
  })

  it('text → uuid: values put in canonical form (those rows move to a new version), the others untouched', async () => {
    const canonical = '0f8e2c1a-9b3d-4e5f-8a7b-6c5d4e3f2a1b'
    const t = await collection(
      'tx_uuid',
      [f('ref', 'text', { unique: true })],
      [
        { ref: canonical.toUpperCase() },
        { ref: canonical.replaceAll('-', '').replace('0f8e', '1f8e') },
        { ref: '2f8e2c1a-9b3d-4e5f-8a7b-6c5d4e3f2a1b' },
      ],
    )
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'ref', { type: 'uuid' }) })
    expect(reply.status, reply.text).toBe(200)
    const after = await byId(t.name)
    const [a, b, c] = t.ids as [string, string, string]
    expect([a, b, c].map((id) => after.get(id)?.ref)).toEqual([
      canonical,
      canonical.replace('0f8e', '1f8e'),
      '2f8e2c1a-9b3d-4e5f-8a7b-6c5d4e3f2a1b',
    ])
    expect(after.get(a)?._version).toBe((rows.get(a)?._version as number) + 1)
    expect(after.get(c)).toEqual(rows.get(c))
    // Still unique, on the canonical form.
    expectError(await write(t.name, { ref: canonical }), 409, 'already_exists')
  })

  it('text → uuid where two values become one on a unique field: 409, nothing changed', async () => {
    const id = '0f8e2c1a-9b3d-4e5f-8a7b-6c5d4e3f2a1b'
    const t = await collection(
      'tx_uuid_uq',
      [f('ref', 'text', { unique: true })],
      [{ ref: id }, { ref: id.toUpperCase() }],
    )
    const before = await definition(t.name)
    const rows = await byId(t.name)
    expectError(await patch(t.name, { fields: fieldsWith(t.fields, 'ref', { type: 'uuid' }) }), 409, 'conflict')
    await expectUnchanged(t.name, before, rows)
  })
})

describe('number ↔ integer', () => {
  const numbers = async () =>
    collection(
      'nums',
      [f('label', 'text'), f('n', 'number', { indexed: true, unique: true }), f('tag', 'text')],
      [
        { label: 'a', n: 3, tag: 'x' },
        { label: 'b', n: -1, tag: 'x' },
        { label: 'c', tag: 'y' },
        { label: 'd', n: 10, tag: 'y' },
      ],
      { indexes: [{ fields: ['tag', '-n'] }] },
    )

  it('number → integer without fractions: 200, values kept, declared INTEGER on SQLite, indexes working', async () => {
    const t = await numbers()
    const rows = await byId(t.name)
    const objects = await sqliteTable(t.name, 'n')
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { type: 'integer' }) })
    expect(reply.status, reply.text).toBe(200)
    expect(await byId(t.name)).toEqual(rows)
    const table = await sqliteTable(t.name, 'n')
    if (table && objects) {
      expect(table.type).toBe('INTEGER')
      expect(objects.type).toBe('REAL')
      expect(table.storedAs).toEqual(['integer'])
      // The rebuild made every index and trigger again, the same.
      expect(table.objects).toEqual(objects.objects)
    }
    expectError(await write(t.name, { label: 'e', n: 2.5 }), 400, 'invalid_field')
    expectError(await write(t.name, { label: 'e', n: 3 }), 409, 'already_exists')
    const sorted = await listAll(server, owner.token, t.name, { sortBy: 'n', order: 'asc' })
    expect(sorted.map((r) => r.n)).toEqual([null, -1, 3, 10])
    const filtered = await listAll(server, owner.token, t.name, {
      filter: JSON.stringify({ tag: { _eq: 'y' } }),
      sortBy: 'n',
      order: 'desc',
    })
    expect(filtered.map((r) => r.label)).toEqual(['d', 'c'])
    const ranged = await listAll(server, owner.token, t.name, { filter: JSON.stringify({ n: { _gte: 3 } }) })
    expect(ranged.map((r) => r.label).sort()).toEqual(['a', 'd'])
  })

  it('number → integer with fractions: 409 with the count and ids, nothing changed', async () => {
    const t = await numbers()
    const extra = await createRecord(server, owner.token, t.name, { label: 'e', n: 2.5 })
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { type: 'integer' }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ field: 'n', records: 1, ids: [extra.id], from: 'number', to: 'integer' })
    expect(reply.body.message).toMatch(/must be a whole number/)
    await expectUnchanged(t.name, before, rows)
    const table = await sqliteTable(t.name, 'n')
    if (table) expect(table.type).toBe('REAL')
  })

  it('integer → number: 200, values kept, fractions writable, unique and the compound index still hold', async () => {
    const t = await collection(
      'ints',
      [f('n', 'integer', { unique: true, indexed: true }), f('tag', 'text')],
      [
        { n: 1, tag: 'x' },
        { n: 2, tag: 'x' },
      ],
      { indexes: [{ fields: ['tag', 'n'] }] },
    )
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { type: 'number' }) })
    expect(reply.status, reply.text).toBe(200)
    expect(await byId(t.name)).toEqual(rows)
    const half = await write(t.name, { n: 1.5, tag: 'x' })
    expect(half.status, half.text).toBe(201)
    expectError(await write(t.name, { n: 2, tag: 'y' }), 409, 'already_exists')
    const sorted = await listAll(server, owner.token, t.name, {
      filter: JSON.stringify({ tag: { _eq: 'x' } }),
      sortBy: 'n',
      order: 'asc',
    })
    expect(sorted.map((r) => r.n)).toEqual([1, 1.5, 2])
    const table = await sqliteTable(t.name, 'n')
    if (table) expect(table.type).toBe('REAL')
  })

  it('a number type change with indexed turned on in the same PATCH: 400, one at a time', async () => {
    const t = await collection('nums_idx', [f('n', 'number')], [{ n: 2.5 }])
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { type: 'integer', indexed: true }) })
    expectError(reply, 400, 'invalid_field')
    expect(reply.body.details).toEqual({ field: 'n', changed: ['type', 'indexed'] })
    await expectUnchanged(t.name, before, rows)
  })

  it('renamed and made an integer in one PATCH: values kept under the new name, fractions still refused', async () => {
    const t = await collection('nums_ren', [f('n', 'number', { unique: true })], [{ n: 1 }, { n: 7 }])
    const fields = t.fields.map((x) => (x.name === 'n' ? { ...x, name: 'amount', type: 'integer' } : x))
    const reply = await patch(t.name, { fields, renames: { n: 'amount' } })
    expect(reply.status, reply.text).toBe(200)
    const after = await byId(t.name)
    expect(t.ids.map((id) => after.get(id)?.amount)).toEqual([1, 7])
    expectError(await write(t.name, { amount: 7 }), 409, 'already_exists')
    const fraction = await collection('nums_ren_no', [f('n', 'number')], [{ n: 1.5 }])
    const before = await definition(fraction.name)
    const rows = await byId(fraction.name)
    const refused = await patch(fraction.name, {
      fields: fraction.fields.map((x) => (x.name === 'n' ? { ...x, name: 'amount', type: 'integer' } : x)),
      renames: { n: 'amount' },
    })
    expectError(refused, 409, 'conflict')
    expect(refused.body.details).toMatchObject({ field: 'amount', records: 1, ids: fraction.ids })
    await expectUnchanged(fraction.name, before, rows)
  })

  it('number → decimal → integer: each step converts', async () => {
    const t = await collection('decs', [f('n', 'number')], [{ n: 4 }, { n: 0 }])
    expect((await patch(t.name, { fields: fieldsWith(t.fields, 'n', { type: 'decimal' }) })).status).toBe(200)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { type: 'integer' }) })
    expect(reply.status, reply.text).toBe(200)
    expect((await listAll(server, owner.token, t.name, { sortBy: 'n', order: 'asc' })).map((r) => r.n)).toEqual([0, 4])
  })
})

describe('validationRules', () => {
  it('a shorter maxLength some values break: 409 with the count and ids, nothing changed', async () => {
    const t = await collection(
      'rules_len',
      [f('code', 'text', { validationRules: { maxLength: 10 } })],
      [{ code: 'short' }, { code: 'much long' }],
    )
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'code', { validationRules: { maxLength: 5 } }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ field: 'code', records: 1, ids: [t.ids[1]] })
    expect(reply.body.message).toMatch(/break the new validationRules .*at most 5 characters/)
    await expectUnchanged(t.name, before, rows)
  })

  it('a longer maxLength, a pattern all values match, and removed rules: 200, the new rules enforced', async () => {
    const t = await collection(
      'rules_ok',
      [f('code', 'text', { validationRules: { maxLength: 5 } })],
      [{ code: 'ab' }, { code: 'abcde' }],
    )
    const longer = await patch(t.name, {
      fields: fieldsWith(t.fields, 'code', { validationRules: { maxLength: 8, pattern: '^[a-z]+$' } }),
    })
    expect(longer.status, longer.text).toBe(200)
    expect((await write(t.name, { code: 'abcdefgh' })).status).toBe(201)
    expectError(await write(t.name, { code: 'ABC' }), 422, 'validation_error')
    const pattern = await patch(t.name, {
      fields: fieldsWith(t.fields, 'code', { validationRules: { pattern: '^a' } }),
    })
    expect(pattern.status, pattern.text).toBe(200)
    expectError(await write(t.name, { code: 'bcd' }), 422, 'validation_error')
    const none = await patch(t.name, { fields: fieldsWith(t.fields, 'code', { validationRules: undefined }) })
    expect(none.status, none.text).toBe(200)
    expect((await write(t.name, { code: 'ANY length at all' })).status).toBe(201)
  })

  it('number min and max: values outside refused with ids; values inside accepted', async () => {
    const t = await collection('rules_num', [f('n', 'integer')], [{ n: 1 }, { n: 50 }, { n: 100 }, {}])
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { validationRules: { min: 10, max: 60 } }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ field: 'n', records: 2, ids: [t.ids[0], t.ids[2]].sort() })
    await expectUnchanged(t.name, before, rows)
    const ok = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { validationRules: { min: 0, max: 100 } }) })
    expect(ok.status, ok.text).toBe(200)
    expectError(await write(t.name, { n: 101 }), 422, 'validation_error')
  })
})

describe('unique on and off', () => {
  it('on with shared values: 409 with how many records and values and their ids (soft-deleted included)', async () => {
    const t = await collection(
      'uq_dup',
      [f('email', 'text')],
      [{ email: 'a@x' }, { email: 'b@x' }, { email: 'a@x' }, { email: 'c@x' }, { email: 'c@x' }, {}, {}],
    )
    await server.request('DELETE', `/api/v1/collections/${t.name}/records/${t.ids[4]}`, { token: owner.token })
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'email', { unique: true }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({
      field: 'email',
      records: 4,
      duplicateValues: 2,
      ids: [t.ids[0], t.ids[2], t.ids[3], t.ids[4]].sort(),
    })
    expect(reply.body.message).toMatch(/4 records share 2 values with another record/)
    await expectUnchanged(t.name, before, rows)
    // Not unique: a third a@x is still accepted.
    expect((await write(t.name, { email: 'a@x' })).status).toBe(201)
  })

  it('on with distinct values (nulls do not count): 200, then a repeat is 409 already_exists; off again allows it', async () => {
    const t = await collection('uq_ok', [f('email', 'text')], [{ email: 'a@x' }, { email: 'b@x' }, {}, {}])
    const rows = await byId(t.name)
    const on = await patch(t.name, { fields: fieldsWith(t.fields, 'email', { unique: true }) })
    expect(on.status, on.text).toBe(200)
    expect(await byId(t.name)).toEqual(rows)
    expectError(await write(t.name, { email: 'a@x' }), 409, 'already_exists')
    const off = await patch(t.name, { fields: fieldsWith(t.fields, 'email', { unique: false }) })
    expect(off.status, off.text).toBe(200)
    expect((await write(t.name, { email: 'a@x' })).status).toBe(201)
  })
})

describe('relationConfig', () => {
  const related = async () => {
    const people = await collection('people', [f('name', 'text'), f('email', 'text')], [{ name: 'Sam' }])
    const tasks = await collection(
      'tasks',
      [
        f('title', 'text'),
        f('owner', 'relation', { relationConfig: { targetCollection: people.name, relationType: 'belongsTo' } }),
      ],
      [{ title: 't', owner: people.ids[0] }],
    )
    return { people, tasks }
  }
  const relationWith = (fields: Field[], config: Field) =>
    fields.map((x) =>
      x.name === 'owner' ? { ...x, relationConfig: { ...(x.relationConfig as Field), ...config } } : x,
    )

  it('displayField and onDelete change as metadata; onDelete (restrict) applies from then on', async () => {
    const { people, tasks } = await related()
    const rows = await byId(tasks.name)
    const reply = await patch(tasks.name, {
      fields: relationWith(tasks.fields, { displayField: 'email', onDelete: 'restrict' }),
    })
    expect(reply.status, reply.text).toBe(200)
    expect(await byId(tasks.name)).toEqual(rows)
    expect((await fieldOf(tasks.name, 'owner'))?.relationConfig).toMatchObject({
      displayField: 'email',
      onDelete: 'restrict',
    })
    // Restrict: the person a task points at cannot be deleted now.
    const removed = await server.request('DELETE', `/api/v1/collections/${people.name}/records/${people.ids[0]}`, {
      token: owner.token,
    })
    expectError(removed, 409, 'conflict')
  })

  const refused: [string, (people: string) => Field, RegExp][] = [
    ['a displayField the target does not have', () => ({ displayField: 'nope' }), /displayField "nope"/],
    ['another targetCollection', () => ({ targetCollection: 'tasks_elsewhere' }), /targetCollection|not a collection/],
    ['another relationType', () => ({ relationType: 'hasMany' }), /relationConfig\.relationType/],
  ]
  it.each(refused)('%s: 400 invalid_field, nothing changed', async (_what, config, message) => {
    const { people, tasks } = await related()
    const before = await definition(tasks.name)
    const rows = await byId(tasks.name)
    const reply = await patch(tasks.name, { fields: relationWith(tasks.fields, config(people.name)) })
    expectError(reply, 400, 'invalid_field')
    expect(reply.body.message).toMatch(message)
    await expectUnchanged(tasks.name, before, rows)
  })

  it('another targetCollection that exists: 400 naming relationConfig.targetCollection', async () => {
    const { tasks } = await related()
    const other = await collection('others', [f('name', 'text')], [])
    const reply = await patch(tasks.name, { fields: relationWith(tasks.fields, { targetCollection: other.name }) })
    expectError(reply, 400, 'invalid_field')
    expect(reply.body.details).toEqual({ field: 'owner', property: 'relationConfig.targetCollection' })
  })
})

describe('a lookup of a field whose type changed', () => {
  it('keeps reading it, and its collection can still be changed (its resultType follows)', async () => {
    const products = await collection('products', [f('price', 'number')], [{ price: 12 }])
    const orders = await collection(
      'orders',
      [
        f('product', 'relation', {
          relationConfig: { targetCollection: products.name, relationType: 'belongsTo' },
        }),
        f('price', 'lookup', { lookupConfig: { relationField: 'product', targetField: 'price' } }),
      ],
      [{ product: products.ids[0] }],
    )
    expect((await fieldOf(orders.name, 'price'))?.resultType).toBe('number')
    const changed = await patch(products.name, { fields: fieldsWith(products.fields, 'price', { type: 'integer' }) })
    expect(changed.status, changed.text).toBe(200)
    const order = await readRecord(server, owner.token, orders.name, orders.ids[0] as string)
    expect(order.price).toBe(12)
    const added = await patch(orders.name, { fields: [...orders.fields, f('note', 'text')] })
    expect(added.status, added.text).toBe(200)
    expect((await fieldOf(orders.name, 'price'))?.resultType).toBe('integer')
  })
})

describe('refused without reading rows', () => {
  it('a pair of types that does not convert: 400 naming the field and the pair, nothing changed', async () => {
    const t = await collection('pairs', [f('title', 'text'), f('n', 'integer')], [{ title: 'a', n: 1 }])
    const before = await definition(t.name)
    const rows = await byId(t.name)
    for (const [field, type] of [
      ['title', 'boolean'],
      ['n', 'text'],
      ['title', 'json'],
    ] as const) {
      const reply = await patch(t.name, { fields: fieldsWith(t.fields, field, { type }) })
      expectError(reply, 400, 'invalid_field')
      expect(reply.body.details).toMatchObject({ field, to: type })
      expect(reply.body.message).toMatch(new RegExp(`Field "${field}": changing type from \\w+ to ${type}`))
    }
    await expectUnchanged(t.name, before, rows)
  })

  it('a viewer may not change a type (403), and nothing changes', async () => {
    const t = await collection('viewer', [f('n', 'number')], [{ n: 1 }])
    const before = await definition(t.name)
    const rows = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'n', { type: 'integer' }) }, viewer.token)
    expectError(reply, 403, 'forbidden')
    await expectUnchanged(t.name, before, rows)
    const read = await readRecord(server, owner.token, t.name, t.ids[0] as string)
    expect(read.n).toBe(1)
  })
})

describe('a type change the rows refuse, with new indexes over the field in the same PATCH', () => {
  it('is the 409 naming the records, not a database error (the rows are checked before any index is made)', async () => {
    const renaming = await collection(
      'nums_ix',
      [f('n', 'number', { indexed: true, unique: true }), f('tag', 'text')],
      [{ n: 1.5, tag: 'x' }],
    )
    const before = await definition(renaming.name)
    const rows = await byId(renaming.name)
    const refused = await patch(renaming.name, {
      fields: renaming.fields.map((x) => (x.name === 'n' ? { ...x, name: 'amount', type: 'integer' } : x)),
      renames: { n: 'amount' },
      indexes: [{ fields: ['tag', 'amount'] }],
    })
    expectError(refused, 409, 'conflict')
    expect(refused.body.details).toMatchObject({ field: 'amount', records: 1, ids: renaming.ids })
    await expectUnchanged(renaming.name, before, rows)
  })
})
