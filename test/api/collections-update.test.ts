import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import {
  accountWithGrants,
  createCollection,
  createRecord,
  field,
  getCollection,
  listedNames,
  postRecord,
  readRecord,
  uniqueName,
} from './collections-support.js'

/**
 * PATCH and DELETE /api/v1/collections/:name: additions and index toggles, schemaVersion and updatedAt,
 * refusals that change nothing, accessControl, and a delete that takes the table and its data. Changes of
 * existing fields (enum values, labels, required) are in collections-changes.test.ts.
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

// `null` is an anonymous caller (no Authorization header); leaving the token out means the owner.
const patch = (name: string, body: unknown, token: string | null = owner.token) =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token: token ?? undefined, body })
const del = (name: string, token: string | null = owner.token) =>
  server.request('DELETE', `/api/v1/collections/${name}`, { token: token ?? undefined })
const listRecords = (name: string, query = '', token: string | null = owner.token) =>
  server.request('GET', `/api/v1/collections/${name}/records${query}`, { token: token ?? undefined })
const columnNames = (detail: { columnStatuses: { name: string; exists: boolean }[] }) =>
  detail.columnStatuses.filter((c) => c.exists).map((c) => c.name)

/**
 * The indexes of a collection's table in the project database: the columns each covers (ordering and
 * collation left out), and whether it is unique. Non-unique ones end in id (decision 024).
 */
async function indexesOf(table: string): Promise<{ columns: string; unique: boolean }[]> {
  const handle = await server.app.registry.get(server.app.defaultProject.id)
  if (handle.kind === 'sqlite') {
    const result = await sql<{ idx: string; col: string; uniq: number; origin: string }>`
      select il.name as idx, ii.name as col, il."unique" as uniq, il.origin as origin
      from pragma_index_list(${table}) as il, pragma_index_info(il.name) as ii`.execute(handle.db)
    const byIndex = new Map<string, { columns: string[]; unique: boolean }>()
    for (const r of result.rows.filter((row) => row.origin !== 'pk')) {
      const entry = byIndex.get(r.idx) ?? { columns: [], unique: r.uniq === 1 }
      entry.columns.push(r.col)
      byIndex.set(r.idx, entry)
    }
    // SQLite's live-row indexes end in deleted_at (decision 024): left out, as PostgreSQL has none there.
    return [...byIndex.values()].map((e) => ({
      columns: e.columns.filter((c, i) => !(c === 'deleted_at' && i === e.columns.length - 1)).join(','),
      unique: e.unique,
    }))
  }
  const result = await sql<{ indexdef: string }>`
    select indexdef from pg_indexes where schemaname = ${handle.schema} and tablename = ${table}`.execute(handle.db)
  return result.rows
    .filter((r) => !/_pkey /.test(r.indexdef) && !/ USING gin /.test(r.indexdef))
    .map((r) => ({
      columns: (/ USING btree \((.*?)\)(?: WHERE |$)/.exec(r.indexdef)?.[1] ?? '')
        .split(',')
        .map((c) => c.trim().split(' ')[0]!)
        .join(','),
      unique: r.indexdef.startsWith('CREATE UNIQUE'),
    }))
}

describe('PATCH /api/v1/collections/:name', () => {
  it('adds fields: 200 { data } with the whole collection, new columns exist, records use them', async () => {
    const name = uniqueName('grow')
    const created = await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    const old = await createRecord(server, owner.token, name, { title: 'before' })

    const reply = await patch(name, {
      fields: [...created.fields, field('pages', 'integer'), field('tags', 'multi_enum', { enumValues: ['a', 'b'] })],
    })
    expect(reply.status, reply.text).toBe(200)
    // core-api § Errors: a single item is { data }; PATCH answers the collection as POST does.
    expect(reply.body).toEqual({
      data: {
        ...created,
        fields: [
          ...created.fields,
          { name: 'pages', type: 'integer', required: false, unique: false, indexed: false },
          { name: 'tags', type: 'multi_enum', required: false, unique: false, indexed: false, enumValues: ['a', 'b'] },
        ],
        updatedAt: expect.any(Number),
        schemaVersion: 2,
      },
    })
    expect(Number.isInteger(reply.body.data.updatedAt)).toBe(true)
    expect(reply.body.data.updatedAt).toBeGreaterThanOrEqual(created.createdAt)

    const detail = await getCollection(server, owner.token, name)
    expect(detail).toMatchObject({
      schemaVersion: 2,
      fields: reply.body.data.fields,
      createdAt: created.createdAt,
      updatedAt: reply.body.data.updatedAt,
    })
    expect(detail.columnStatuses.slice(-3)).toEqual([
      { name: 'title', exists: true, type: expect.any(String) },
      { name: 'pages', exists: true, type: expect.any(String) },
      { name: 'tags', exists: true, type: expect.any(String) },
    ])

    const fresh = await createRecord(server, owner.token, name, { title: 'after', pages: 12, tags: ['b'] })
    expect(fresh).toMatchObject({ title: 'after', pages: 12, tags: ['b'] })
    expect(await readRecord(server, owner.token, name, old.id)).toMatchObject({
      title: 'before',
      pages: null,
      tags: null,
    })
    const filtered = await listRecords(name, `?filter=${encodeURIComponent(JSON.stringify({ pages: { _gt: 10 } }))}`)
    expect(filtered.body.data.map((r: { id: string }) => r.id)).toEqual([fresh.id])
  })

  it('the fields GET returns can be sent back as they are (resultType and onDelete included)', async () => {
    const target = uniqueName('patch_target')
    await createCollection(server, owner.token, { name: target, fields: [field('n', 'integer')] })
    const name = uniqueName('roundtrip')
    await createCollection(server, owner.token, {
      name,
      fields: [
        field('link', 'relation', { relationConfig: { targetCollection: target, relationType: 'belongsTo' } }),
        field('link_n', 'lookup', { lookupConfig: { relationField: 'link', targetField: 'n' } }),
      ],
    })
    const detail = await getCollection(server, owner.token, name)
    const reply = await patch(name, { fields: [...detail.fields, field('note', 'text')] })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.fields.slice(0, 2)).toEqual(detail.fields)
  })

  // Clients commonly send back what they read: the whole detail GET returned, with a field added. The
  // read-only properties (id, projectId, schemaVersion, createdAt, updatedAt, columnStatuses, policyKey) are
  // ignored; name, storageType and databaseId must be the current ones.
  it('the whole collection GET returns can be sent back with a field added', async () => {
    const target = uniqueName('patch_target')
    await createCollection(server, owner.token, { name: target, fields: [field('n', 'integer')] })
    const name = uniqueName('sent_back')
    await createCollection(server, owner.token, {
      name,
      accessControl: { preset: 'team', sharing: true },
      fields: [
        field('link', 'relation', { relationConfig: { targetCollection: target, relationType: 'belongsTo' } }),
        field('link_n', 'lookup', { lookupConfig: { relationField: 'link', targetField: 'n' } }),
        field('meta', 'json', {
          structure: {
            enforcement: 'warn',
            shape: {
              type: 'object',
              entries: { kind: { type: 'enum', values: ['a', { value: 'b', label: { de: 'Be' } }] } },
            },
          },
        }),
        field('title', 'text', { indexed: true, validationRules: { maxLength: 80 } }),
      ],
    })
    const detail = await getCollection(server, owner.token, name)
    const reply = await patch(name, { ...detail, fields: [...detail.fields, field('note', 'text')] })
    expect(reply.status, reply.text).toBe(200)
    const { columnStatuses: _statuses, policyKey: _policyKey, ...collection } = detail
    expect(reply.body.data).toEqual({
      ...collection,
      fields: [...detail.fields, { name: 'note', type: 'text', required: false, unique: false, indexed: false }],
      schemaVersion: 2,
      updatedAt: expect.any(Number),
    })

    // Stale read-only values are ignored too: they are not a version check.
    const again = await patch(name, {
      ...reply.body.data,
      id: 'f'.repeat(32),
      projectId: 'elsewhere',
      schemaVersion: 1,
      createdAt: 0,
      updatedAt: 0,
      columnStatuses: [],
      policyKey: 'x',
    })
    expect(again.status, again.text).toBe(200)
    expect(again.body.data).toMatchObject({
      id: detail.id,
      projectId: detail.projectId,
      schemaVersion: 3,
      createdAt: detail.createdAt,
    })
  })

  describe('properties that are not patchable', () => {
    let name: string
    let created: any
    beforeAll(async () => {
      name = uniqueName('fixed')
      created = await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    })
    const refusals: [string, () => Record<string, unknown>, string, Record<string, unknown>][] = [
      ['a new name (renaming is not supported)', () => ({ name: 'renamed' }), 'invalid_request', { property: 'name' }],
      [
        'another storageType (moving is not supported)',
        () => ({ storageType: 'kv' }),
        'invalid_request',
        { property: 'storageType', current: 'd1' },
      ],
      [
        'another storageType that exists (remote)',
        () => ({ storageType: 'remote' }),
        'invalid_request',
        { property: 'storageType' },
      ],
      [
        'another databaseId',
        () => ({ databaseId: '0123456789abcdef0123456789abcdef' }),
        'invalid_request',
        { property: 'databaseId', current: 'main' },
      ],
    ]
    it.each(refusals)('%s: 400 %s', async (_what, extra, code, details) => {
      const reply = await patch(name, { fields: created.fields, ...extra() })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toMatchObject({ error: code, details })
    })

    it.each<[string, Record<string, unknown>, string]>([
      ['an unknown property', { bogus: 1 }, 'bogus'],
      ['a misspelt one', { acessControl: { preset: 'public' } }, 'acessControl'],
    ])('%s: 400 invalid_request naming it', async (_what, extra, key) => {
      const reply = await patch(name, { fields: created.fields, ...extra })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect(reply.body.message).toContain(key)
    })

    it.each<[string, () => unknown[], Record<string, unknown>]>([
      [
        'an unknown property of a field',
        () => [{ ...created.fields[0], uniqe: true }],
        { field: 'title', index: 0, property: 'uniqe' },
      ],
      [
        'an unknown property of an added field',
        () => [...created.fields, field('more', 'text', { indexd: true })],
        { field: 'more', index: 1, property: 'indexd' },
      ],
      ['null for a field', () => [...created.fields, null], { field: null, index: 1 }],
      ['a string for a field', () => ['title'], { field: null, index: 0 }],
    ])('%s: 400 invalid_field', async (_what, fields, details) => {
      const reply = await patch(name, { fields: fields() })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toMatchObject({ error: 'invalid_field', details })
    })

    it('the current name, storageType and databaseId are accepted; after the refusals nothing changed', async () => {
      const detail = await getCollection(server, owner.token, name)
      expect(detail).toMatchObject({
        name,
        storageType: 'd1',
        databaseId: 'main',
        schemaVersion: 1,
        fields: created.fields,
      })
      expect(await listedNames(server, owner.token)).not.toContain('renamed')
      const reply = await patch(name, { name, storageType: 'd1', databaseId: 'main', fields: created.fields })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.data).toMatchObject({ name, storageType: 'd1', databaseId: 'main', schemaVersion: 2 })
    })
  })

  it('adding a computed field adds no column; it is read through its relation', async () => {
    const target = uniqueName('patch_target')
    await createCollection(server, owner.token, { name: target, fields: [field('label', 'text')] })
    const name = uniqueName('later_lookup')
    const created = await createCollection(server, owner.token, {
      name,
      fields: [field('link', 'relation', { relationConfig: { targetCollection: target, relationType: 'belongsTo' } })],
    })
    const t = await createRecord(server, owner.token, target, { label: 'red' })
    const r = await createRecord(server, owner.token, name, { link: t.id })
    const reply = await patch(name, {
      fields: [
        ...created.fields,
        field('link_label', 'lookup', { lookupConfig: { relationField: 'link', targetField: 'label' } }),
      ],
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.fields[1]).toMatchObject({ name: 'link_label', type: 'lookup', resultType: 'text' })
    const detail = await getCollection(server, owner.token, name)
    expect(detail.columnStatuses.map((c: { name: string }) => c.name)).not.toContain('link_label')
    expect(await readRecord(server, owner.token, name, r.id)).toMatchObject({ link: t.id, link_label: 'red' })
  })

  it('an added required field is enforced on new records; an added unique field refuses duplicates', async () => {
    const name = uniqueName('stricter')
    const created = await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    await createRecord(server, owner.token, name, { title: 'old row' })
    const reply = await patch(name, {
      fields: [...created.fields, field('code', 'text', { required: true, unique: true })],
    })
    expect(reply.status, reply.text).toBe(200)
    const missing = await postRecord(server, owner.token, name, { title: 'no code' })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ error: 'missing_field', details: { field: 'code' } })
    await createRecord(server, owner.token, name, { title: 'one', code: 'X1' })
    const dup = await postRecord(server, owner.token, name, { title: 'two', code: 'X1' })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('already_exists')
    expect((await listRecords(name)).body.total).toBe(2)
    expect(await indexesOf(name)).toContainEqual({ columns: 'code', unique: true })
  })

  it('toggles indexed on and off: the index appears and goes, schemaVersion +1 each time', async () => {
    const name = uniqueName('toggle')
    const created = await createCollection(server, owner.token, {
      name,
      fields: [field('status', 'text'), field('rank', 'integer')],
    })
    expect(await indexesOf(name)).not.toContainEqual({ columns: 'status,id', unique: false })

    const on = await patch(name, { fields: [{ ...created.fields[0], indexed: true }, created.fields[1]] })
    expect(on.status, on.text).toBe(200)
    expect(on.body.data.schemaVersion).toBe(2)
    expect(on.body.data.fields[0]).toMatchObject({ name: 'status', indexed: true })
    expect(await indexesOf(name)).toContainEqual({ columns: 'status,id', unique: false })

    const off = await patch(name, {
      fields: [
        { ...created.fields[0], indexed: false },
        { ...created.fields[1], indexed: true },
      ],
    })
    expect(off.status, off.text).toBe(200)
    expect(off.body.data.schemaVersion).toBe(3)
    const indexes = await indexesOf(name)
    expect(indexes).not.toContainEqual({ columns: 'status,id', unique: false })
    expect(indexes).toContainEqual({ columns: 'rank,id', unique: false })

    // Sending the same list again changes nothing in the table but is still a new version.
    const same = await patch(name, { fields: off.body.data.fields })
    expect(same.status).toBe(200)
    expect(same.body.data.schemaVersion).toBe(4)
    expect((await getCollection(server, owner.token, name)).schemaVersion).toBe(4)
    await createRecord(server, owner.token, name, { status: 'ok', rank: 1 })
  })

  it('rebuilds search when a text field is added: both the old and the new field are searchable', async () => {
    const name = uniqueName('searchable')
    const created = await createCollection(server, owner.token, {
      name,
      fields: [field('title', 'text'), field('n', 'integer')],
    })
    const a = await createRecord(server, owner.token, name, { title: 'aardvark', n: 1 })
    const reply = await patch(name, { fields: [...created.fields, field('summary', 'text')] })
    expect(reply.status, reply.text).toBe(200)
    const b = await createRecord(server, owner.token, name, { title: 'badger', summary: 'zebra crossing' })
    const byTitle = await listRecords(name, '?search=aardvark')
    expect(byTitle.status, byTitle.text).toBe(200)
    expect(byTitle.body.data.map((r: { id: string }) => r.id)).toEqual([a.id])
    const bySummary = await listRecords(name, '?search=zebra')
    expect(bySummary.body.data.map((r: { id: string }) => r.id)).toEqual([b.id])
  })

  describe('changes other than additions and index toggles are refused, and change nothing', () => {
    let name: string
    let created: any
    let statusesBefore: unknown
    beforeAll(async () => {
      name = uniqueName('frozen')
      created = await createCollection(server, owner.token, {
        name,
        fields: [
          field('title', 'text', { required: true, validationRules: { maxLength: 10 } }),
          field('kind', 'enum', { enumValues: ['a', 'b'] }),
          field('n', 'integer', { unique: true }),
        ],
      })
      statusesBefore = (await getCollection(server, owner.token, name)).columnStatuses
    })
    const [title, kind, n] = [0, 1, 2]
    const withField = (index: number, change: Record<string, unknown>) =>
      created.fields.map((f: Record<string, unknown>, i: number) => (i === index ? { ...f, ...change } : f))

    it.each<[string, () => unknown[], string]>([
      ['removing a field', () => created.fields.slice(1), 'title'],
      ['removing every field', () => [], 'title'],
      ['renaming a field', () => withField(title, { name: 'heading' }), 'title'],
      // Type, unique and rules changes that convert are accepted (collections-changes-types.test.ts).
      ['changing a type to one that does not convert', () => withField(n, { type: 'boolean' }), 'n'],
      ['changing translatable', () => withField(title, { translatable: true }), 'title'],
      ['changing an integer to text', () => withField(n, { type: 'text' }), 'n'],
      ['changing an enum to multi_enum', () => withField(kind, { type: 'multi_enum' }), 'kind'],
      ['adding a field while removing another', () => [...created.fields.slice(0, 2), field('extra', 'text')], 'n'],
    ])('%s: 400 invalid_field naming the field', async (_what, fields, named) => {
      const reply = await patch(name, { fields: fields() })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toMatchObject({ error: 'invalid_field', details: { field: named } })
    })

    it.each<[string, () => unknown[], string]>([
      [
        'an added field named like a system column',
        () => [...created.fields, field('deleted_at', 'integer')],
        'reserved_field',
      ],
      [
        'an added field named twice',
        () => [...created.fields, field('extra', 'text'), field('extra', 'text')],
        'duplicate_field',
      ],
      ['an added field with a bad name', () => [...created.fields, field('Extra', 'text')], 'invalid_name'],
      ['an added field of an unknown type', () => [...created.fields, field('extra', 'string')], 'invalid_field'],
      [
        'an added relation to an unknown collection',
        () => [
          ...created.fields,
          field('extra', 'relation', { relationConfig: { targetCollection: 'nope', relationType: 'belongsTo' } }),
        ],
        'invalid_field',
      ],
    ])('%s: 400 %s', async (_what, fields, code) => {
      const reply = await patch(name, { fields: fields() })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.error).toBe(code)
    })

    it('a bad accessControl is 400 invalid_request even with a valid field list', async () => {
      const reply = await patch(name, {
        fields: [...created.fields, field('extra', 'text')],
        accessControl: { preset: 'secret' },
      })
      expect(reply.status).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    })

    it('after all those refusals the collection is exactly as created', async () => {
      const detail = await getCollection(server, owner.token, name)
      expect(detail).toMatchObject({
        fields: created.fields,
        schemaVersion: 1,
        updatedAt: created.updatedAt,
        accessControl: null,
      })
      expect(detail.columnStatuses).toEqual(statusesBefore)
      expect(columnNames(detail)).not.toContain('extra')
      const refused = await postRecord(server, owner.token, name, { title: 'x', extra: 'y' })
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ error: 'invalid_field', details: { field: 'extra' } })
    })
  })

  it('sets, changes and clears accessControl; leaving it out keeps it', async () => {
    const name = uniqueName('acl')
    const created = await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    await createRecord(server, owner.token, name, { title: 'visible?' })
    // Nothing of this project is open to public yet: an anonymous list is asked to sign in (decision 012).
    expect((await server.request('GET', '/api/v1/collections')).status).toBe(401)
    expect((await listRecords(name, '', null)).status).toBe(401)

    const toPublic = await patch(name, { fields: created.fields, accessControl: { preset: 'public' } })
    expect(toPublic.status, toPublic.text).toBe(200)
    expect(toPublic.body.data.schemaVersion).toBe(2)
    expect((await getCollection(server, owner.token, name)).accessControl).toEqual({ preset: 'public' })
    expect(await listedNames(server)).toContain(name)
    const anonymous = await listRecords(name, '', null)
    expect(anonymous.status, anonymous.text).toBe(200)
    expect(anonymous.body.data.map((r: { title: string }) => r.title)).toEqual(['visible?'])

    const kept = await patch(name, { fields: [...created.fields, field('more', 'text')] })
    expect(kept.status).toBe(200)
    expect((await getCollection(server, owner.token, name)).accessControl).toEqual({ preset: 'public' })

    const toTeam = await patch(name, {
      fields: kept.body.data.fields,
      accessControl: { preset: 'team', sharing: false },
    })
    expect(toTeam.status).toBe(200)
    expect((await getCollection(server, owner.token, name)).accessControl).toEqual({ preset: 'team', sharing: false })
    expect((await server.request('GET', '/api/v1/collections')).status).toBe(401)
    expect((await listRecords(name, '', null)).status).toBe(401)

    const cleared = await patch(name, { fields: kept.body.data.fields, accessControl: null })
    expect(cleared.status).toBe(200)
    expect((await getCollection(server, owner.token, name)).accessControl).toBeNull()
    expect(cleared.body.data.schemaVersion).toBe(5)
  })

  it('private preset: records are narrowed to their owner once set', async () => {
    const name = uniqueName('acl_private')
    const created = await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    const editor = await createAccount(server, owner.token, { role: 'editor' })
    await createRecord(server, editor.token, name, { title: 'mine' })
    await createRecord(server, owner.token, name, { title: 'owners' })
    expect((await listRecords(name, '', editor.token)).body.total).toBe(2)
    expect((await patch(name, { fields: created.fields, accessControl: { preset: 'private' } })).status).toBe(200)
    const after = await listRecords(name, '', editor.token)
    expect(after.body.data.map((r: { title: string }) => r.title)).toEqual(['mine'])
  })

  describe('refusals', () => {
    let name: string
    let fields: unknown[]
    beforeAll(async () => {
      name = uniqueName('guarded')
      fields = (await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })).fields
    })
    runScenarios(
      () => server,
      [
        {
          name: 'unknown collection',
          method: 'PATCH',
          path: '/api/v1/collections/no_such_collection',
          as: () => owner.token,
          body: { fields: [] },
          status: 404,
          contains: { error: 'collection_not_found' },
        },
        {
          // Without fields a PATCH changes what it sends (here the access config); the collection must exist.
          name: 'no fields, no collection',
          method: 'PATCH',
          path: '/api/v1/collections/no_such_collection',
          as: () => owner.token,
          body: { accessControl: null },
          status: 404,
          contains: { error: 'collection_not_found' },
        },
        {
          name: 'anonymous',
          method: 'PATCH',
          path: '/api/v1/collections/no_such_collection',
          body: { fields: [] },
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'a viewer',
          method: 'PATCH',
          path: '/api/v1/collections/no_such_collection',
          as: () => viewer.token,
          body: { fields: [] },
          status: 403,
          contains: { error: 'forbidden' },
        },
      ],
    )

    it('a viewer, an editor and anonymous callers cannot change a real collection', async () => {
      const editor = await createAccount(server, owner.token, { role: 'editor' })
      const body = { fields: [...fields, field('hack', 'text')], accessControl: { preset: 'public' } }
      expect((await patch(name, body, viewer.token)).status).toBe(403)
      expect((await patch(name, body, editor.token)).status).toBe(403)
      expect((await patch(name, body, null)).status).toBe(401)
      expect(await getCollection(server, owner.token, name)).toMatchObject({
        fields,
        schemaVersion: 1,
        accessControl: null,
      })
    })

    it('a custom role holding schema/*:update may patch', async () => {
      const updater = await accountWithGrants(server, owner.token, [{ resource: 'schema/*', action: 'update' }])
      const reply = await patch(name, { fields: [...fields, field('added_by_role', 'text')] }, updater.token)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.data.schemaVersion).toBe(2)
      expect((await del(name, updater.token)).status).toBe(403)
    })
  })
})

describe('DELETE /api/v1/collections/:name', () => {
  it('answers success true; the collection, its table and its data are gone', async () => {
    const name = uniqueName('doomed')
    await createCollection(server, owner.token, {
      name,
      fields: [
        field('title', 'text', { unique: true }),
        field('body', 'richtext'),
        field('rank', 'integer', { indexed: true }),
      ],
    })
    const record = await createRecord(server, owner.token, name, { title: 'keep me?', rank: 1 })

    const reply = await del(name)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true })

    expect(await listedNames(server, owner.token)).not.toContain(name)
    const detail = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
    expect(detail.status).toBe(404)
    expect(detail.body.error).toBe('collection_not_found')
    const records = await listRecords(name)
    expect(records.status).toBe(404)
    expect(records.body.error).toBe('collection_not_found')
    expect(
      (await server.request('GET', `/api/v1/collections/${name}/records/${record.id}`, { token: owner.token })).body
        .error,
    ).toBe('collection_not_found')

    // The same name again is a new, empty collection with only its new fields; the old indexes are gone too.
    const again = await createCollection(server, owner.token, {
      name,
      fields: [field('title', 'text', { unique: true }), field('other', 'boolean')],
    })
    expect(again.schemaVersion).toBe(1)
    const list = await listRecords(name)
    expect(list.status).toBe(200)
    expect(list.body).toMatchObject({ data: [], total: 0 })
    const statuses = (await getCollection(server, owner.token, name)).columnStatuses.map(
      (c: { name: string }) => c.name,
    )
    expect(statuses.slice(-2)).toEqual(['title', 'other'])
    const oldRecord = await server.request('GET', `/api/v1/collections/${name}/records/${record.id}`, {
      token: owner.token,
    })
    expect(oldRecord.status).toBe(404)
    expect(oldRecord.body.error).toBe('record_not_found')
    expect((await createRecord(server, owner.token, name, { title: 'keep me?', other: true })).title).toBe('keep me?')
    expect(await indexesOf(name)).not.toContainEqual({ columns: 'rank,id', unique: false })
  })

  // Deleting a collection another collection's relation points at would leave that relation dangling (and
  // its collection unpatchable): the delete is refused with 409 conflict naming the referencing fields.
  it('a collection stays patchable after deleting a collection its relation points at is tried', async () => {
    const target = uniqueName('ref_target')
    await createCollection(server, owner.token, { name: target, fields: [field('name', 'text')] })
    const source = uniqueName('ref_source')
    const created = await createCollection(server, owner.token, {
      name: source,
      fields: [field('link', 'relation', { relationConfig: { targetCollection: target, relationType: 'belongsTo' } })],
    })
    const refused = await del(target)
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: 'conflict', details: { referencing: [`${source}.link`] } })
    const reply = await patch(source, { fields: [...created.fields, field('note', 'text')] })
    expect(reply.status, reply.text).toBe(200)
  })

  it('a second delete is 404 collection_not_found', async () => {
    const name = uniqueName('twice')
    await createCollection(server, owner.token, { name, fields: [] })
    expect((await del(name)).status).toBe(200)
    const again = await del(name)
    expect(again.status).toBe(404)
    expect(again.body.error).toBe('collection_not_found')
  })

  describe('permission schema/*:delete', () => {
    runScenarios(
      () => server,
      [
        {
          name: 'unknown collection',
          method: 'DELETE',
          path: '/api/v1/collections/no_such_collection',
          as: () => owner.token,
          status: 404,
          contains: { error: 'collection_not_found' },
        },
        {
          name: 'anonymous',
          method: 'DELETE',
          path: '/api/v1/collections/no_such_collection',
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'a viewer',
          method: 'DELETE',
          path: '/api/v1/collections/no_such_collection',
          as: () => viewer.token,
          status: 403,
          contains: { error: 'forbidden' },
        },
      ],
    )

    it('refused deletes leave the collection and its records; a role holding schema/*:delete may delete', async () => {
      const name = uniqueName('survivor')
      await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
      await createRecord(server, owner.token, name, { title: 'still here' })
      const editor = await createAccount(server, owner.token, { role: 'editor' })
      expect((await del(name, viewer.token)).status).toBe(403)
      expect((await del(name, editor.token)).status).toBe(403)
      expect((await del(name, null)).status).toBe(401)
      expect((await listRecords(name)).body.total).toBe(1)

      const deleter = await accountWithGrants(server, owner.token, [{ resource: 'schema/*', action: 'delete' }])
      expect((await del(name, deleter.token)).status).toBe(200)
      expect(await listedNames(server, owner.token)).not.toContain(name)
    })
  })
})
