import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll, readRecord } from './records-fixtures.js'

/**
 * PATCH /api/v1/collections/:name changing existing fields (docs/collections.md "Changing a collection"):
 * enum and multi_enum values added, removed and renamed with `enumChanges`, labels; what the rows hold
 * is read back after each answer. Runs on the storage type TEST_STORAGE_TYPE names (d1 unset) and on
 * PostgreSQL with TEST_DATABASE_URL.
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

const patch = (name: string, body: unknown, token = owner.token) =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token, body })
const definition = async (name: string) => {
  const reply = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}
const byId = async (name: string) => new Map((await listAll(server, owner.token, name)).map((r) => [r.id, r]))

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
  fields.map((f) => (f.name === name ? { ...f, ...change } : f))

/** A fresh `tickets`-like collection with a status enum, a tags multi_enum and three records. */
async function tickets() {
  const name = freshName('tickets')
  await createCollection(server, owner.token, name, [
    f('title', 'text'),
    f('status', 'enum', { enumValues: ['open', 'waiting', 'closed'] }),
    f('tags', 'multi_enum', { enumValues: ['bug', 'ui', 'api'] }),
  ])
  const a = await createRecord(server, owner.token, name, { title: 'a', status: 'open', tags: ['bug', 'ui'] })
  const b = await createRecord(server, owner.token, name, { title: 'b', status: 'closed', tags: ['ui'] })
  const c = await createRecord(server, owner.token, name, { title: 'c', status: 'closed', tags: ['api', 'bug'] })
  const d = await createRecord(server, owner.token, name, { title: 'd' })
  const { fields, schemaVersion } = await definition(name)
  return { name, fields: fields as Field[], schemaVersion: schemaVersion as number, ids: [a.id, b.id, c.id, d.id] }
}

describe('metadata changes: enum values added, labels changed', () => {
  it('adds a value and changes labels: 200, schemaVersion + 1, rows untouched, the new value writable', async () => {
    const t = await tickets()
    const before = await byId(t.name)
    let fields = fieldsWith(t.fields, 'status', { enumValues: ['open', 'waiting', 'closed', 'spam'], label: 'State' })
    fields = fieldsWith(fields, 'tags', { enumValues: ['bug', 'ui', 'api', 'docs'], label: 'Tags' })
    fields = fieldsWith(fields, 'title', { label: 'Title' })
    const reply = await patch(t.name, { fields })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.schemaVersion).toBe(t.schemaVersion + 1)
    const stored = await definition(t.name)
    expect(stored.fields.find((f: Field) => f.name === 'status')).toMatchObject({
      enumValues: ['open', 'waiting', 'closed', 'spam'],
      label: 'State',
    })
    expect(stored.fields.find((f: Field) => f.name === 'title').label).toBe('Title')
    // No row was rewritten: same values, same versions.
    expect(await byId(t.name)).toEqual(before)
    const spam = await createRecord(server, owner.token, t.name, { title: 'e', status: 'spam', tags: ['docs'] })
    expect(await readRecord(server, owner.token, t.name, spam.id)).toMatchObject({ status: 'spam', tags: ['docs'] })
  })

  it('writes the change to the audit log with each field before and after', async () => {
    const t = await tickets()
    const fields = fieldsWith(t.fields, 'status', { enumValues: ['open', 'waiting', 'closed', 'spam'] })
    expect((await patch(t.name, { fields })).status).toBe(200)
    const log = await server.request('GET', '/api/v1/audit-log?action=collection.updated&limit=100', {
      token: owner.token,
    })
    expect(log.status, log.text).toBe(200)
    const entry = log.body.data.find((e: { details: { name: string } }) => e.details.name === t.name)
    expect(entry.details.changes).toEqual([
      {
        kind: 'enumValues',
        field: 'status',
        before: expect.objectContaining({ enumValues: ['open', 'waiting', 'closed'] }),
        after: expect.objectContaining({ enumValues: ['open', 'waiting', 'closed', 'spam'] }),
      },
    ])
  })

  it('a viewer may not change a collection (403), and nothing changes', async () => {
    const t = await tickets()
    const fields = fieldsWith(t.fields, 'status', { enumValues: ['open', 'waiting', 'closed', 'spam'] })
    expect((await patch(t.name, { fields }, viewer.token)).status).toBe(403)
    expect((await definition(t.name)).schemaVersion).toBe(t.schemaVersion)
  })

  it('other changes of an existing field stay refused with 400 invalid_field', async () => {
    const t = await tickets()
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'title', { translatable: true }) })
    expectError(reply, 400, 'invalid_field')
    expect(reply.body.details).toMatchObject({ field: 'title', changed: ['translatable'] })
  })
})

describe('removing and renaming enum values', () => {
  it('removing values records hold is 409 conflict with the count per value, and changes nothing', async () => {
    const t = await tickets()
    const before = await byId(t.name)
    let fields = fieldsWith(t.fields, 'status', { enumValues: ['open'] })
    fields = [...fields, f('extra', 'text', { indexed: true })]
    const reply = await patch(t.name, { fields })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ field: 'status', values: { closed: 2 } })
    expect(reply.body.message).toMatch(/2 records hold "closed"/)
    const stored = await definition(t.name)
    expect(stored.schemaVersion).toBe(t.schemaVersion)
    expect(stored.fields.map((f: Field) => f.name)).toEqual(['title', 'status', 'tags'])
    expect(stored.columnStatuses.some((c: { name: string }) => c.name === 'extra')).toBe(false)
    expect(await byId(t.name)).toEqual(before)
  })

  it('removing a value no record holds needs no mapping', async () => {
    const t = await tickets()
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'status', { enumValues: ['open', 'closed'] }) })
    expect(reply.status, reply.text).toBe(200)
  })

  it('renames a value with enumChanges: the rows that held it get the new one, in the same change', async () => {
    const t = await tickets()
    const before = await byId(t.name)
    const fields = fieldsWith(t.fields, 'status', { enumValues: ['open', 'waiting', 'done'] })
    const reply = await patch(t.name, { fields, enumChanges: { status: { closed: 'done' } } })
    expect(reply.status, reply.text).toBe(200)
    const after = await byId(t.name)
    const [a, b, c, d] = t.ids as [string, string, string, string]
    expect([a, b, c, d].map((id) => after.get(id)?.status)).toEqual(['open', 'done', 'done', null])
    // Rewritten rows move on to a new version (their ETags change); the others keep theirs.
    expect(after.get(b)?._version).toBe((before.get(b)?._version as number) + 1)
    expect(after.get(a)?._version).toBe(before.get(a)?._version)
    const old = await server.request('POST', `/api/v1/collections/${t.name}/records`, {
      token: owner.token,
      body: { title: 'x', status: 'closed' },
    })
    expect(old.status, old.text).toBe(400)
    expect(old.text).toMatch(/status/)
  })

  it('maps several values, one onto another kept one (merging)', async () => {
    const t = await tickets()
    const fields = fieldsWith(t.fields, 'status', { enumValues: ['active', 'closed'] })
    const reply = await patch(t.name, { fields, enumChanges: { status: { open: 'active', waiting: 'active' } } })
    expect(reply.status, reply.text).toBe(200)
    const after = await byId(t.name)
    expect(t.ids.map((id) => after.get(id)?.status)).toEqual(['active', 'closed', 'closed', null])
  })

  it('multi_enum: each element is mapped and repeats merged', async () => {
    const t = await tickets()
    const fields = fieldsWith(t.fields, 'tags', { enumValues: ['bug', 'api'] })
    const unmapped = await patch(t.name, { fields })
    expectError(unmapped, 409, 'conflict')
    expect(unmapped.body.details).toEqual({ field: 'tags', values: { ui: 2 } })
    const reply = await patch(t.name, { fields, enumChanges: { tags: { ui: 'bug' } } })
    expect(reply.status, reply.text).toBe(200)
    const after = await byId(t.name)
    expect(t.ids.map((id) => after.get(id)?.tags)).toEqual([['bug'], ['bug'], ['api', 'bug'], null])
  })

  it('two fields in one PATCH: when one is refused, the other is not rewritten either', async () => {
    const t = await tickets()
    const before = await byId(t.name)
    let fields = fieldsWith(t.fields, 'status', { enumValues: ['open', 'waiting', 'done'] })
    fields = fieldsWith(fields, 'tags', { enumValues: ['bug', 'api'] })
    const reply = await patch(t.name, { fields, enumChanges: { status: { closed: 'done' } } })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details.field).toBe('tags')
    expect(await byId(t.name)).toEqual(before)
    expect((await definition(t.name)).schemaVersion).toBe(t.schemaVersion)
  })

  it('a unique field whose values a mapping would merge: 409 conflict, nothing changed', async () => {
    const name = freshName('codes')
    await createCollection(server, owner.token, name, [
      f('code', 'enum', { unique: true, enumValues: ['a', 'b', 'c'] }),
    ])
    await createRecord(server, owner.token, name, { code: 'a' })
    await createRecord(server, owner.token, name, { code: 'b' })
    const before = await byId(name)
    const { fields, schemaVersion } = await definition(name)
    const reply = await patch(name, {
      fields: fieldsWith(fields, 'code', { enumValues: ['b', 'c'] }),
      enumChanges: { code: { a: 'b' } },
    })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ field: 'code' })
    expect((await definition(name)).schemaVersion).toBe(schemaVersion)
    expect(await byId(name)).toEqual(before)
  })

  const refused: [string, (t: Awaited<ReturnType<typeof tickets>>) => unknown, number, string][] = [
    [
      'enumChanges for a field whose values do not change',
      (t) => ({ fields: t.fields, enumChanges: { status: { closed: 'open' } } }),
      400,
      'invalid_request',
    ],
    [
      'enumChanges naming a field that does not exist (an identifier-like injection)',
      (t) => ({
        fields: fieldsWith(t.fields, 'status', { enumValues: ['open'] }),
        enumChanges: { 'status" = null; --': { closed: 'open' } },
      }),
      400,
      'invalid_request',
    ],
    [
      'a mapped value the field never had (a quoting injection)',
      (t) => ({
        fields: fieldsWith(t.fields, 'status', { enumValues: ['open'] }),
        enumChanges: { status: { "closed' or '1'='1": 'open', closed: 'open', waiting: 'open' } },
      }),
      400,
      'invalid_request',
    ],
    [
      'a target outside the new values',
      (t) => ({
        fields: fieldsWith(t.fields, 'status', { enumValues: ['open'] }),
        enumChanges: { status: { closed: 'gone', waiting: 'open' } },
      }),
      400,
      'invalid_request',
    ],
    [
      'enumChanges that are not an object of strings',
      (t) => ({ fields: t.fields, enumChanges: { status: { closed: 3 } } }),
      400,
      'invalid_request',
    ],
  ]
  it.each(refused)('%s: %s %s, nothing changed', async (_what, body, status, code) => {
    const t = await tickets()
    const before = await byId(t.name)
    const reply = await patch(t.name, body(t))
    expectError(reply, status, code)
    expect((await definition(t.name)).schemaVersion).toBe(t.schemaVersion)
    expect(await byId(t.name)).toEqual(before)
  })
})

/** On SQLite in the project database (d1), the table's indexes and triggers by name and statement; else null. */
async function tableObjects(table: string): Promise<unknown> {
  const handle = await server.app.registry.get(server.app.defaultProject.id)
  if (handle.kind !== 'sqlite' || process.env.TEST_STORAGE_TYPE) return null
  const result = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null
    order by name`.execute(handle.db)
  expect(result.rows.length).toBeGreaterThan(2)
  return result.rows
}

describe('required turned on and off', () => {
  it('on, with records that have no value and no default: 409 conflict with their count, nothing changed', async () => {
    const t = await tickets()
    const before = await byId(t.name)
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'status', { required: true }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ field: 'status', nullRecords: 1 })
    expect(reply.body.message).toMatch(/1 record has no value/)
    expect((await definition(t.name)).schemaVersion).toBe(t.schemaVersion)
    expect(await byId(t.name)).toEqual(before)
  })

  it('on, with a default: the records without a value get it; a later write of null is refused', async () => {
    const t = await tickets()
    const before = await byId(t.name)
    let fields = fieldsWith(t.fields, 'status', { required: true, defaultValue: 'waiting' })
    fields = fieldsWith(fields, 'tags', { required: true, defaultValue: ['api'] })
    const reply = await patch(t.name, { fields })
    expect(reply.status, reply.text).toBe(200)
    const after = await byId(t.name)
    const [a, , , d] = t.ids as [string, string, string, string]
    expect(t.ids.map((id) => after.get(id)?.status)).toEqual(['open', 'closed', 'closed', 'waiting'])
    expect(after.get(d)?.tags).toEqual(['api'])
    expect(after.get(d)?._version).toBeGreaterThan(before.get(d)?._version as number)
    expect(after.get(a)).toEqual(before.get(a))
    const cleared = await server.request('PATCH', `/api/v1/collections/${t.name}/records/${a}`, {
      token: owner.token,
      body: { status: null },
    })
    expectError(cleared, 400, 'missing_field')
  })

  it('on, for a unique field with several empty records: one default cannot fill them (409), nothing changed', async () => {
    const name = freshName('handles')
    await createCollection(server, owner.token, name, [f('title', 'text'), f('handle', 'text', { unique: true })])
    await createRecord(server, owner.token, name, { title: 'a' })
    await createRecord(server, owner.token, name, { title: 'b' })
    const before = await byId(name)
    const { fields } = await definition(name)
    const reply = await patch(name, { fields: fieldsWith(fields, 'handle', { required: true, defaultValue: 'x' }) })
    expectError(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ field: 'handle' })
    expect(await byId(name)).toEqual(before)
  })

  it('on, when every record has a value: no default needed', async () => {
    const t = await tickets()
    const reply = await patch(t.name, { fields: fieldsWith(t.fields, 'title', { required: true }) })
    expect(reply.status, reply.text).toBe(200)
  })

  it('off, for a field required since the table was made: records without it can be written, the rest kept', async () => {
    const name = freshName('notes')
    await createCollection(server, owner.token, name, [
      f('title', 'text', { required: true }),
      f('body', 'text', { required: true, indexed: true }),
      f('rank', 'integer', { unique: true }),
    ])
    const kept = await createRecord(server, owner.token, name, { title: 'zebra crossing', body: 'x', rank: 1 })
    const before = await byId(name)
    const objectsBefore = await tableObjects(name)
    const { fields, schemaVersion } = await definition(name)
    const reply = await patch(name, { fields: fieldsWith(fields, 'body', { required: false }) })
    expect(reply.status, reply.text).toBe(200)
    // SQLite rebuilt the table: its indexes and triggers are made again, the same.
    expect(await tableObjects(name)).toEqual(objectsBefore)
    expect(reply.body.data.schemaVersion).toBe(schemaVersion + 1)
    expect(await byId(name)).toEqual(before)
    const bare = await createRecord(server, owner.token, name, { title: 'yak', rank: 2 })
    expect((await readRecord(server, owner.token, name, bare.id)).body).toBeNull()
    // The search index, the unique index and the field index still hold after the change.
    const found = await listAll(server, owner.token, name, { search: 'zebra' })
    expect(found.map((r) => r.id)).toEqual([kept.id])
    const twin = await server.request('POST', `/api/v1/collections/${name}/records`, {
      token: owner.token,
      body: { title: 'twin', rank: 1 },
    })
    expectError(twin, 409, 'already_exists')
    const sorted = await listAll(server, owner.token, name, { sortBy: 'body', order: 'asc' })
    expect(sorted.map((r) => [r.id, r.body])).toEqual([
      [bare.id, null],
      [kept.id, 'x'],
    ])
    // Still required where it was: title.
    const missing = await server.request('POST', `/api/v1/collections/${name}/records`, {
      token: owner.token,
      body: { rank: 3 },
    })
    expectError(missing, 400, 'missing_field')
  })
})
