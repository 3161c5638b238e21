import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll } from './records-fixtures.js'

/**
 * POST /api/v1/collections/:name/changes/preview (docs/collections.md "Previewing a change"): the same body
 * as the PATCH, answered with what the PATCH would do, writing nothing; then the PATCH meets what the
 * preview said. Runs on the storage type TEST_STORAGE_TYPE names and on PostgreSQL with TEST_DATABASE_URL.
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

const patch = (name: string, body: unknown, token = owner.token) =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token, body })
const preview = (name: string, body: unknown, token = owner.token) =>
  server.request('POST', `/api/v1/collections/${name}/changes/preview`, { token, body })
const definition = async (name: string) => {
  const reply = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}
const auditCount = async () => {
  const reply = await server.request('GET', '/api/v1/audit-log?action=collection.updated&limit=100', {
    token: owner.token,
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data.length as number
}

type Field = Record<string, unknown>
const f = (name: string, type: string, extra: Field = {}): Field => ({
  name,
  type,
  required: false,
  unique: false,
  indexed: false,
  ...extra,
})

/** tickets: a status enum (two records waiting), a code, a note held by two records, a title. */
async function tickets() {
  const name = freshName('tickets')
  const fields = [
    f('title', 'text'),
    f('status', 'enum', { enumValues: ['open', 'waiting', 'closed'] }),
    f('code', 'text'),
    f('note', 'text'),
  ]
  await createCollection(server, owner.token, name, fields)
  await createRecord(server, owner.token, name, { title: 'a', status: 'waiting', code: 'x', note: 'n1' })
  await createRecord(server, owner.token, name, { title: 'b', status: 'waiting', code: 'x' })
  await createRecord(server, owner.token, name, { title: 'c', status: 'open', code: 'y', note: 'n2' })
  return { name, fields }
}

/** Everything a preview must leave as it was: the definition, the rows as stored, the audit log. */
async function snapshot(name: string) {
  return {
    definition: await definition(name),
    rows: await listAll(server, owner.token, name, { sortBy: 'title', order: 'asc' }),
    audit: await auditCount(),
  }
}

describe('preview of an accepted change', () => {
  it('lists each change with its rows, writes nothing, and the PATCH then does just that', async () => {
    const { name, fields } = await tickets()
    const body = {
      fields: [
        f('headline', 'text'),
        f('status', 'enum', { enumValues: ['open', 'closed'] }),
        f('code', 'text'),
        f('priority', 'integer'),
      ],
      renames: { title: 'headline' },
      drop: ['note'],
      enumChanges: { status: { waiting: 'open' } },
    }
    const before = await snapshot(name)
    const reply = await preview(name, body)
    expect(reply.status, reply.text).toBe(200)
    const data = reply.body.data
    expect(data).toMatchObject({
      accepted: true,
      refusal: null,
      records: 3,
      schemaVersion: { from: before.definition.schemaVersion, to: before.definition.schemaVersion + 1 },
    })
    const byKind = Object.fromEntries(data.changes.map((c: Field) => [`${c.kind}:${c.field}`, c]))
    expect(byKind['added:priority']).toBeDefined()
    expect(byKind['renamed:headline']).toMatchObject({ from: 'title', updated: [], kept: [] })
    expect(byKind['dropped:note']).toMatchObject({ valuesLost: 2 })
    expect(byKind['enumValues:status']).toMatchObject({ rowsRewritten: 2 })
    // Nothing written: definition, rows (values, versions, times), columns, audit.
    expect(await snapshot(name)).toEqual(before)
    expect(fields.map((x) => x.name)).toEqual(before.definition.fields.map((x: Field) => x.name))
    const done = await patch(name, body)
    expect(done.status, done.text).toBe(200)
    expect(done.body.data.schemaVersion).toBe(data.schemaVersion.to)
    const rows = await listAll(server, owner.token, name, { sortBy: 'headline', order: 'asc' })
    expect(rows.map((r) => [r.headline, r.status, r.priority, 'note' in r])).toEqual([
      ['a', 'open', null, false],
      ['b', 'open', null, false],
      ['c', 'open', null, false],
    ])
    expect(await auditCount()).toBe(before.audit + 1)
  })
})

describe('preview of a refused change', () => {
  it.each<[string, (fields: Field[]) => Field]>([
    [
      'an enum value records hold, unmapped',
      (fields) => ({ fields: fields.map((x) => (x.name === 'status' ? { ...x, enumValues: ['open', 'closed'] } : x)) }),
    ],
    [
      'required with null records and no default',
      (fields) => ({ fields: fields.map((x) => (x.name === 'note' ? { ...x, required: true } : x)) }),
    ],
    [
      'unique over shared values',
      (fields) => ({ fields: fields.map((x) => (x.name === 'code' ? { ...x, unique: true } : x)) }),
    ],
    [
      'text to an enum its values are outside of',
      (fields) => ({ fields: fields.map((x) => (x.name === 'code' ? { ...x, type: 'enum', enumValues: ['x'] } : x)) }),
    ],
  ])('%s: 200 with the 409 the PATCH then answers, word for word', async (_label, bodyOf) => {
    const { name, fields } = await tickets()
    const body = bodyOf(fields)
    const before = await snapshot(name)
    const reply = await preview(name, body)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.accepted).toBe(false)
    expect(await snapshot(name)).toEqual(before)
    const refused = await patch(name, body)
    expect(refused.status, refused.text).toBe(reply.body.data.refusal.status)
    expect(refused.body).toEqual({
      error: reply.body.data.refusal.error,
      message: reply.body.data.refusal.message,
      details: reply.body.data.refusal.details,
    })
    expect(await snapshot(name)).toEqual(before)
  })

  it('a drop something depends on: the refusal names it', async () => {
    const { name, fields } = await tickets()
    const role = freshName('r')
    const created = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: role } })
    await server.request('PUT', `/api/v1/roles/${created.body.data.id}/grants`, {
      token: owner.token,
      body: { grants: [{ resource: `collections/${name}`, action: 'read', fields: ['title', 'note'] }] },
    })
    const body = { fields: fields.filter((x) => x.name !== 'note'), drop: ['note'] }
    const reply = await preview(name, body)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.refusal).toMatchObject({ status: 409, error: 'conflict' })
    expect(reply.body.data.changes).toContainEqual(
      expect.objectContaining({ kind: 'dropped', field: 'note', valuesLost: 2 }),
    )
    expectError(await patch(name, body), 409, 'conflict')
  })
})

describe('preview of a request the PATCH would refuse outright', () => {
  it('answers the same 400, 403 and 404', async () => {
    const { name, fields } = await tickets()
    const missing = { fields: fields.filter((x) => x.name !== 'note') }
    const previewed = await preview(name, missing)
    expectError(previewed, 400, 'invalid_field')
    expect(previewed.body).toEqual((await patch(name, missing)).body)
    const viewer = await createAccount(server, owner.token, { role: 'viewer' })
    expectError(await preview(name, { fields }, viewer.token), 403, 'forbidden')
    expectError(await preview('no_such_collection', { fields }), 404, 'collection_not_found')
  })
})
