import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll, recordsPath } from './records-fixtures.js'

/**
 * PATCH /api/v1/collections/:name renaming fields (`renames`) and dropping them (`drop`), docs/collections.md
 * "Changing a collection" and decision 062: data kept under the new name, indexes and the search index
 * following, references rewritten (grants, other collections' relations and lookups, compound indexes) or
 * reported, and drops refused while anything names the field. Runs on the storage type TEST_STORAGE_TYPE
 * names and on PostgreSQL with TEST_DATABASE_URL.
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

const signIn = async (account: Account) => {
  const reply = await server.request('POST', '/api/auth/sign-in/email', {
    body: { email: account.email, password: account.password },
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as { token: string }
}

const patch = (name: string, body: unknown, token = owner.token) =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token, body })
const definition = async (name: string) => {
  const reply = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
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
const renamed = (fields: Field[], from: string, to: string, change: Field = {}) =>
  fields.map((x) => (x.name === from ? { ...x, name: to, ...change } : x))
const without = (fields: Field[], name: string) => fields.filter((x) => x.name !== name)

/** A collection with an indexed title, a unique code, a note and an age, and three records. */
async function notes() {
  const name = freshName('notes')
  const fields = [
    f('title', 'text', { indexed: true }),
    f('code', 'text', { unique: true }),
    f('note', 'text'),
    f('age', 'integer'),
  ]
  await createCollection(server, owner.token, name, fields, { indexes: [{ fields: ['age', '-title'] }] })
  const rows = [
    await createRecord(server, owner.token, name, { title: 'banana', code: 'b', note: 'yellow fruit', age: 2 }),
    await createRecord(server, owner.token, name, { title: 'apple', code: 'a', note: 'red fruit', age: 1 }),
    await createRecord(server, owner.token, name, { title: 'cherry', code: 'c', age: 3 }),
  ]
  return { name, fields, rows, version: (await definition(name)).schemaVersion as number }
}

describe('renaming a field', () => {
  it('keeps the data under the new name, with its index, unique index, compound index and search', async () => {
    const { name, fields, rows, version } = await notes()
    const reply = await patch(name, {
      fields: renamed(renamed(fields, 'title', 'headline'), 'note', 'body'),
      renames: { title: 'headline', note: 'body' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.schemaVersion).toBe(version + 1)
    expect(reply.body.data.fields.map((x: Field) => x.name)).toEqual(['headline', 'code', 'body', 'age'])
    expect(reply.body.data.indexes).toEqual([expect.objectContaining({ fields: ['age', '-headline'], unique: false })])
    expect(reply.body.meta.renames.map((r: Field) => [r.from, r.to])).toEqual([
      ['title', 'headline'],
      ['note', 'body'],
    ])
    const listed = await listAll(server, owner.token, name, { sortBy: 'headline', order: 'asc' })
    expect(listed.map((r) => [r.id, r.headline, r.body])).toEqual([
      [rows[1]!.id, 'apple', 'red fruit'],
      [rows[0]!.id, 'banana', 'yellow fruit'],
      [rows[2]!.id, 'cherry', null],
    ])
    expect(listed.every((r) => !('title' in r) && !('note' in r))).toBe(true)
    const filtered = await listAll(server, owner.token, name, {
      filter: JSON.stringify({ headline: { _eq: 'apple' } }),
    })
    expect(filtered.map((r) => r.id)).toEqual([rows[1]!.id])
    expect((await listAll(server, owner.token, name, { search: 'yellow' })).map((r) => r.id)).toEqual([rows[0]!.id])
    // The search index follows writes under the new name (its triggers were renamed with the column).
    const edited = await server.request('PATCH', recordsPath(name, rows[2]!.id), {
      token: owner.token,
      body: { body: 'purple stone' },
    })
    expect(edited.status, edited.text).toBe(200)
    expect((await listAll(server, owner.token, name, { search: 'purple' })).map((r) => r.id)).toEqual([rows[2]!.id])
    // The old name is gone from filters; the unique index still holds; new records take the new names.
    const old = await server.request('GET', recordsPath(name, undefined, { filter: '{"title":{"_eq":"apple"}}' }), {
      token: owner.token,
    })
    expectError(old, 400, 'invalid_request')
    const created = await createRecord(server, owner.token, name, { headline: 'date', code: 'd', body: 'brown' })
    expect(created.headline).toBe('date')
    const duplicate = await server.request('POST', recordsPath(name), {
      token: owner.token,
      body: { headline: 'e', code: 'a' },
    })
    expect(duplicate.status, duplicate.text).toBe(409)
    // The renamed field's index goes on and off under its new name.
    const next = renamed(renamed(fields, 'title', 'headline'), 'note', 'body')
    const off = await patch(name, { fields: next.map((x) => (x.name === 'headline' ? { ...x, indexed: false } : x)) })
    expect(off.status, off.text).toBe(200)
    const on = await patch(name, { fields: next })
    expect(on.status, on.text).toBe(200)
  })

  it('is refused without `renames` (the field is missing, named in the error) and changes nothing', async () => {
    const { name, fields, version } = await notes()
    const reply = await patch(name, { fields: renamed(fields, 'title', 'headline') })
    expectError(reply, 400, 'invalid_field')
    expect(reply.body.message).toContain('"title"')
    expect(reply.body.message).toContain('renames')
    expect(reply.body.message).toContain('drop')
    expect((await definition(name)).schemaVersion).toBe(version)
    expect((await listAll(server, owner.token, name)).map((r) => r.title).sort()).toEqual(['apple', 'banana', 'cherry'])
  })

  it.each([
    ['an unknown field', { nope: 'x' }, undefined, 'not a field'],
    ['onto an existing field', { title: 'code' }, undefined, 'already a field'],
    ['a field both renamed and dropped', { title: 'headline' }, ['title'], 'both renamed and dropped'],
    ['two fields onto one name', { title: 'same', note: 'same' }, undefined, 'two fields'],
  ])('refuses %s with 400', async (_label, renames, drop, message) => {
    const { name, fields, version } = await notes()
    const reply = await patch(name, { fields: renamed(fields, 'title', 'headline'), renames, drop })
    expectError(reply, 400, 'invalid_request')
    expect(reply.body.message).toContain(message)
    expect((await definition(name)).schemaVersion).toBe(version)
  })

  it('needs the field list with renames or drop; without them a PATCH keeps the fields as they are', async () => {
    const { name, version } = await notes()
    for (const body of [{ renames: { title: 'headline' } }, { drop: ['note'] }]) {
      const reply = await patch(name, body)
      expectError(reply, 400, 'invalid_request')
      expect(reply.body.details.property).toBe('fields')
    }
    expect((await definition(name)).schemaVersion).toBe(version)
    // The access config alone (the access brick's call) changes that and nothing else.
    const before = await definition(name)
    const reply = await patch(name, { accessControl: { preset: 'private', sharing: true } })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.accessControl).toEqual({ preset: 'private', sharing: true })
    expect(reply.body.data.fields).toEqual(before.fields)
    expect(reply.body.data.indexes).toEqual(before.indexes)
    expect((await listAll(server, owner.token, name)).map((r) => r.title).sort()).toEqual(['apple', 'banana', 'cherry'])
  })

  it('rewrites grants on the collection (fields and item_filter) and reports grants on every collection', async () => {
    const { name, fields } = await notes()
    const role = `reader_${freshName('r')}`
    const created = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: role } })
    expect(created.status, created.text).toBe(201)
    const grants = [
      {
        resource: `collections/${name}`,
        action: 'read',
        fields: ['title', 'age'],
        item_filter: { title: { _neq: 'cherry' } },
      },
      { resource: 'collections/*', action: 'create', fields: ['title'] },
    ]
    const put = await server.request('PUT', `/api/v1/roles/${created.body.data.id}/grants`, {
      token: owner.token,
      body: { grants },
    })
    expect(put.status, put.text).toBe(200)
    const reader = await createAccount(server, owner.token, { role })
    const reply = await patch(name, { fields: renamed(fields, 'title', 'headline'), renames: { title: 'headline' } })
    expect(reply.status, reply.text).toBe(200)
    const report = reply.body.meta.renames[0]
    expect(report.updated.map((r: Field) => r.kind)).toEqual(['grant'])
    expect(report.kept).toEqual([expect.objectContaining({ kind: 'grant', updatable: false })])
    const stored = await server.request('GET', `/api/v1/roles/${created.body.data.id}/grants`, { token: owner.token })
    expect(stored.body.data[0]).toMatchObject({
      fields: ['headline', 'age'],
      item_filter: { headline: { _neq: 'cherry' } },
    })
    expect(stored.body.data[1].fields).toEqual(['title'])
    // The reader still sees what it saw, under the new name, with its row rule applied.
    const seen = await listAll(server, reader.token, name, { sortBy: 'headline', order: 'asc' })
    expect(seen.map((r) => r.headline)).toEqual(['apple', 'banana'])
    expect(seen.every((r) => !('code' in r))).toBe(true)
  })

  it("rewrites other collections' display fields and lookups, bumping their schema versions", async () => {
    const { name, fields, rows } = await notes()
    const links = freshName('links')
    await createCollection(server, owner.token, links, [
      f('target', 'relation', {
        relationConfig: { targetCollection: name, relationType: 'belongsTo', displayField: 'title' },
      }),
      f('target_title', 'lookup', { lookupConfig: { relationField: 'target', targetField: 'title' } }),
    ])
    const link = await createRecord(server, owner.token, links, { target: rows[0]!.id })
    const linksVersion = (await definition(links)).schemaVersion
    const reply = await patch(name, { fields: renamed(fields, 'title', 'headline'), renames: { title: 'headline' } })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.meta.renames[0].updated.map((r: Field) => r.name).sort()).toEqual([
      `${links}.target (relation displayField)`,
      `${links}.target_title (lookup targetField)`,
    ])
    const after = await definition(links)
    expect(after.schemaVersion).toBe(linksVersion + 1)
    expect(after.fields[0].relationConfig.displayField).toBe('headline')
    expect(after.fields[1].lookupConfig.targetField).toBe('headline')
    const read = await server.request('GET', recordsPath(links, link.id), { token: owner.token })
    expect(read.status, read.text).toBe(200)
    expect(read.body.data.target_title).toBe('banana')
  })
})

describe('a crash between the table change and the registry write', () => {
  it('the same PATCH sent again finds the table changed and completes', async () => {
    const { name, fields, rows, version } = await notes()
    const stored = await server.app.registry.system.db
      .selectFrom('collections')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirstOrThrow()
    const body = {
      fields: [
        ...without(renamed(fields, 'title', 'headline'), 'note'),
        f('extra', 'text', { indexed: true, unique: true }),
      ],
      renames: { title: 'headline' },
      drop: ['note'],
    }
    expect((await patch(name, body)).status).toBe(200)
    // The registry row as it was: what the system database holds when the process died before writing it.
    await server.app.registry.system.db
      .updateTable('collections')
      .set({ fields: stored.fields, indexes: stored.indexes, schema_version: stored.schema_version })
      .where('id', '=', stored.id)
      .execute()
    server = await server.restart()
    owner = { ...owner, token: (await signIn(owner)).token }
    expect((await definition(name)).schemaVersion).toBe(version)
    const again = await patch(name, body)
    expect(again.status, again.text).toBe(200)
    expect(again.body.data.fields.map((x: Field) => x.name)).toEqual(['headline', 'code', 'age', 'extra'])
    const listed = await listAll(server, owner.token, name, { sortBy: 'headline', order: 'asc' })
    expect(listed.map((r) => [r.id, r.headline, r.note])).toEqual([
      [rows[1]!.id, 'apple', undefined],
      [rows[0]!.id, 'banana', undefined],
      [rows[2]!.id, 'cherry', undefined],
    ])
    await createRecord(server, owner.token, name, { headline: 'd', code: 'd', extra: 'x' })
    const duplicate = await server.request('POST', recordsPath(name), { token: owner.token, body: { extra: 'x' } })
    expect(duplicate.status, duplicate.text).toBe(409)
  })
})

describe('dropping a field', () => {
  it('drops the column and its data only when named in `drop`', async () => {
    const { name, fields, version } = await notes()
    const reply = await patch(name, { fields: without(fields, 'note'), drop: ['note'] })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.schemaVersion).toBe(version + 1)
    expect(reply.body.data.fields.map((x: Field) => x.name)).toEqual(['title', 'code', 'age'])
    const listed = await listAll(server, owner.token, name)
    expect(listed).toHaveLength(3)
    expect(listed.every((r) => !('note' in r))).toBe(true)
    expect((await listAll(server, owner.token, name, { search: 'yellow' })).length).toBe(0)
    // Added again, the field starts empty: the dropped values are gone, not hidden.
    const again = await patch(name, { fields: [...without(fields, 'note'), f('note', 'text')] })
    expect(again.status, again.text).toBe(200)
    expect((await listAll(server, owner.token, name)).map((r) => r.note)).toEqual([null, null, null])
  })

  it('drops indexed and unique fields (their indexes go with them)', async () => {
    const { name, fields } = await notes()
    const reply = await patch(name, {
      fields: without(without(fields, 'code'), 'title'),
      drop: ['code', 'title'],
      indexes: [],
    })
    expect(reply.status, reply.text).toBe(200)
    const again = await patch(name, {
      fields: [...without(without(fields, 'code'), 'title'), f('code', 'text', { unique: true })],
      indexes: [],
    })
    expect(again.status, again.text).toBe(200)
    expect((await createRecord(server, owner.token, name, { code: 'a' })).code).toBe('a')
  })

  it('is refused with 409 listing what names it: a compound index, a grant, a lookup, a display field', async () => {
    const { name, fields, version } = await notes()
    const role = `holder_${freshName('r')}`
    const created = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: role } })
    const put = await server.request('PUT', `/api/v1/roles/${created.body.data.id}/grants`, {
      token: owner.token,
      body: { grants: [{ resource: `collections/${name}`, action: 'read', item_filter: { note: { _nnull: true } } }] },
    })
    expect(put.status, put.text).toBe(200)
    const links = freshName('links')
    await createCollection(server, owner.token, links, [
      f('target', 'relation', {
        relationConfig: { targetCollection: name, relationType: 'belongsTo', displayField: 'code' },
      }),
    ])
    const cases: [string, string][] = [
      ['age', 'index'],
      ['note', 'grant'],
      ['code', 'field'],
    ]
    for (const [field, kind] of cases) {
      const reply = await patch(name, { fields: without(fields, field), drop: [field] })
      expectError(reply, 409, 'conflict')
      expect(reply.body.details.fields[0].field).toBe(field)
      expect(reply.body.details.fields[0].dependents.map((d: Field) => d.kind)).toContain(kind)
    }
    expect((await definition(name)).schemaVersion).toBe(version)
    expect((await listAll(server, owner.token, name)).map((r) => r.note).sort()).toEqual([
      null,
      'red fruit',
      'yellow fruit',
    ])
    // Leaving the index out in the same PATCH lets the field go.
    const dropped = await patch(name, { fields: without(fields, 'age'), drop: ['age'], indexes: [] })
    expect(dropped.status, dropped.text).toBe(200)
  })

  it.each([
    ['an unknown field', ['nope'], 'not a field'],
    ['a field still listed', ['note'], 'still lists'],
  ])('refuses %s with 400', async (_label, drop, message) => {
    const { name, fields } = await notes()
    const reply = await patch(name, { fields, drop })
    expectError(reply, 400, 'invalid_request')
    expect(reply.body.message).toContain(message)
  })

  it('is forbidden to a viewer, as any schema change is', async () => {
    const { name, fields } = await notes()
    const viewer = await createAccount(server, owner.token, { role: 'viewer' })
    expectError(await patch(name, { fields: without(fields, 'note'), drop: ['note'] }, viewer.token), 403, 'forbidden')
    expectError(
      await patch(name, { fields: renamed(fields, 'note', 'n'), renames: { note: 'n' } }, viewer.token),
      403,
      'forbidden',
    )
  })
})

describe('search indexes, lenses and flows naming a field', () => {
  async function dependents() {
    const made = await notes()
    const { name } = made
    const index = await server.request('POST', '/api/v1/search-indexes', {
      token: owner.token,
      body: { name: freshName('idx').replace(/_/g, '-'), sources: [{ collection: name, fields: ['title'] }] },
    })
    expect(index.status, index.text).toBe(201)
    const lens = await server.request('POST', '/api/v1/lenses', {
      token: owner.token,
      body: { name: freshName('lens'), collection: name, filter: { note: { _nnull: true } } },
    })
    expect(lens.status, lens.text).toBe(201)
    const flow = await server.request('POST', '/api/v1/automate/flows', {
      token: owner.token,
      body: {
        name: freshName('ages'),
        triggerType: 'manual',
        triggerConfig: {},
        operations: [{ key: 'old', type: 'crud_read', config: { collection: name, filter: { age: { _gt: 1 } } } }],
      },
    })
    expect(flow.status, flow.text).toBe(201)
    return { ...made, index: index.body.data, lens: lens.body.data, flow: flow.body.data }
  }

  it('refuses to drop what they name, listing each', async () => {
    const { name, fields, index, lens, flow } = await dependents()
    const cases: [string, string, string][] = [
      ['title', 'search_index', index.id],
      ['note', 'lens', lens.id],
      ['age', 'flow', flow.id],
    ]
    for (const [field, kind, id] of cases) {
      const reply = await patch(name, { fields: without(fields, field), drop: [field], indexes: [] })
      expectError(reply, 409, 'conflict')
      expect(reply.body.details.fields[0].dependents).toContainEqual(expect.objectContaining({ kind, id }))
    }
  })

  it('a rename rewrites the search index (stale until rebuilt) and reports the lens and the flow', async () => {
    const { name, fields, index, lens, flow } = await dependents()
    const reply = await patch(name, {
      fields: renamed(renamed(renamed(fields, 'title', 'headline'), 'note', 'body'), 'age', 'years'),
      renames: { title: 'headline', note: 'body', age: 'years' },
    })
    expect(reply.status, reply.text).toBe(200)
    const byField = Object.fromEntries(reply.body.meta.renames.map((r: any) => [r.from, r]))
    expect(byField.title.updated).toEqual([expect.objectContaining({ kind: 'search_index', id: index.id })])
    expect(byField.note.kept).toEqual([expect.objectContaining({ kind: 'lens', id: lens.id, updatable: false })])
    expect(byField.age.kept).toEqual([expect.objectContaining({ kind: 'flow', id: flow.id, updatable: false })])
    const stored = await server.request('GET', `/api/v1/search-indexes/${index.name}`, { token: owner.token })
    expect(stored.body.data.sources).toEqual([{ collection: name, fields: ['headline'] }])
    expect(stored.body.data.status).toBe('stale')
    // The audit entry keeps the same report.
    const audit = await server.request('GET', '/api/v1/audit-log?action=collection.updated&limit=1', {
      token: owner.token,
    })
    expect(audit.status, audit.text).toBe(200)
    expect(audit.body.data[0].details.renamed.map((r: any) => r.to)).toEqual(['headline', 'body', 'years'])
  })

  it('saved views and renderers naming the field refuse its drop and are reported by a rename', async () => {
    const { name, fields } = await notes()
    const view = await server.request('POST', '/api/v1/views', {
      token: owner.token,
      body: { name: freshName('v'), collection: name, fields: ['title', 'code'], shared: true },
    })
    expect(view.status, view.text).toBe(201)
    const renderer = await server.request('POST', '/api/v1/renderers', {
      token: owner.token,
      body: { name: freshName('r'), collection: name, kind: 'card', template: '<b>{{code}}</b>' },
    })
    expect(renderer.status, renderer.text).toBe(201)
    const refused = await patch(name, { fields: without(fields, 'code'), drop: ['code'] })
    expectError(refused, 409, 'conflict')
    expect(refused.body.details.fields[0].dependents.map((d: Field) => d.kind).sort()).toEqual(['renderer', 'view'])
    const reply = await patch(name, { fields: renamed(fields, 'code', 'sku'), renames: { code: 'sku' } })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.meta.renames[0].kept.map((d: Field) => d.id).sort()).toEqual(
      [view.body.data.id, renderer.body.data.id].sort(),
    )
  })
})
