import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, field, getCollection, postRecord, uniqueName } from './collections-support.js'
import { indexDefinitions, isLiveRowIndex } from './collections-indexes-support.js'

/**
 * Compound indexes declared on a collection (beyond the spec, decision 024) and the live-row indexes every
 * collection gets: created with the table or by PATCH, dropped by PATCH, shown in the detail, refused
 * whole (400, nothing written) when malformed.
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

const articleFields = () => [
  field('title', 'text'),
  field('status', 'enum', { enumValues: ['draft', 'published'], indexed: true }),
  field('views', 'integer'),
  field('code', 'text', { unique: true }),
  field('meta', 'json'),
]
const patch = (name: string, body: unknown) =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token: owner.token, body })
const list = (name: string, query: string) =>
  server.request('GET', `/api/v1/collections/${name}/records?${query}`, { token: owner.token })
const ixName = (name: string) => new RegExp(`^${name}__ix_[0-9a-f]{8}$`)

describe('compound indexes', () => {
  it('POST declares them: named, shown by POST and GET, made as live-row indexes in the table', async () => {
    const name = uniqueName('ix_create')
    const created = await createCollection(server, owner.token, {
      name,
      fields: articleFields(),
      indexes: [{ fields: ['status', '-views'] }, { fields: ['code', 'status'], unique: true }],
    })
    expect(created.indexes).toEqual([
      { name: expect.stringMatching(ixName(name)), fields: ['status', '-views'], unique: false },
      { name: expect.stringMatching(ixName(name)), fields: ['code', 'status'], unique: true },
    ])
    expect(created.indexes[0].name).not.toBe(created.indexes[1].name)
    expect((await getCollection(server, owner.token, name)).indexes).toEqual(created.indexes)

    const defs = await indexDefinitions(server, name)
    const plain = defs.get(created.indexes[0].name)!
    expect(plain).toMatch(/status.*views.*id/is)
    expect(isLiveRowIndex(plain)).toBe(true)
    // Unique ones stay whole: a soft-deleted record keeps its value, so restoring it never collides.
    const unique = defs.get(created.indexes[1].name)!
    expect(unique).toMatch(/^create unique index/i)
    expect(isLiveRowIndex(unique)).toBe(false)
    // The created-at index and the `indexed` field's are live-row indexes too; a unique field's is whole.
    expect(isLiveRowIndex(defs.get(`${name}__created_at__idx`)!)).toBe(true)
    expect(isLiveRowIndex(defs.get(`${name}__status__idx`)!)).toBe(true)
    expect(isLiveRowIndex(defs.get(`${name}__code__uq`)!)).toBe(false)
  })

  it('a collection without indexes answers indexes: []', async () => {
    const name = uniqueName('ix_none')
    expect((await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })).indexes).toEqual(
      [],
    )
  })

  it('the list over live rows answers from them; soft-deleted rows are left out, and shown with include_deleted', async () => {
    const name = uniqueName('ix_list')
    await createCollection(server, owner.token, {
      name,
      fields: articleFields(),
      indexes: [{ fields: ['status', '-views'] }],
    })
    const rows = []
    for (const [status, views] of [
      ['published', 5],
      ['draft', 9],
      ['published', 7],
      ['published', 1],
    ] as const) {
      rows.push(await createRecord(server, owner.token, name, { status, views }))
    }
    const gone = await server.request('DELETE', `/api/v1/collections/${name}/records/${rows[2].id}`, {
      token: owner.token,
    })
    expect(gone.status, gone.text).toBe(200)
    const filter = encodeURIComponent(JSON.stringify({ status: { _eq: 'published' } }))
    const live = await list(name, `limit=25&sortBy=-views&filter=${filter}`)
    expect(live.status, live.text).toBe(200)
    expect(live.body.data.map((r: { views: number }) => r.views)).toEqual([5, 1])
    expect(live.body.total).toBe(2)
    const all = await list(name, `limit=25&sortBy=-views&filter=${filter}&include_deleted=true`)
    expect(all.status, all.text).toBe(200)
    expect(all.body.data.map((r: { views: number }) => r.views)).toEqual([7, 5, 1])
    expect(all.body.total).toBe(3)
  })

  it('PATCH adds, keeps (indexes left out), and drops them, schemaVersion +1 each time', async () => {
    const name = uniqueName('ix_patch')
    const created = await createCollection(server, owner.token, { name, fields: articleFields() })
    expect(created.indexes).toEqual([])

    const added = await patch(name, {
      fields: [...created.fields, field('score', 'number')],
      indexes: [{ fields: ['score', 'status'] }],
    })
    expect(added.status, added.text).toBe(200)
    expect(added.body.data.schemaVersion).toBe(2)
    const [index] = added.body.data.indexes
    expect(index).toEqual({ name: expect.stringMatching(ixName(name)), fields: ['score', 'status'], unique: false })
    expect((await indexDefinitions(server, name)).has(index.name)).toBe(true)

    // Without `indexes` they stay as they are; sent back as GET shows them (names included) they stay too.
    const kept = await patch(name, { fields: added.body.data.fields })
    expect(kept.status, kept.text).toBe(200)
    expect(kept.body.data.indexes).toEqual([index])
    const roundTrip = await patch(name, await getCollection(server, owner.token, name))
    expect(roundTrip.status, roundTrip.text).toBe(200)
    expect(roundTrip.body.data.indexes).toEqual([index])
    expect((await indexDefinitions(server, name)).has(index.name)).toBe(true)

    const dropped = await patch(name, { fields: added.body.data.fields, indexes: [] })
    expect(dropped.status, dropped.text).toBe(200)
    expect(dropped.body.data.indexes).toEqual([])
    expect(dropped.body.data.schemaVersion).toBe(5)
    expect((await indexDefinitions(server, name)).has(index.name)).toBe(false)
    expect((await getCollection(server, owner.token, name)).indexes).toEqual([])
  })

  it('an index change refreshes the planner statistics of the table', async () => {
    const name = uniqueName('ix_stats')
    const created = await createCollection(server, owner.token, { name, fields: articleFields() })
    for (let i = 0; i < 20; i++)
      await createRecord(server, owner.token, name, { status: i % 2 ? 'draft' : 'published', views: i })
    const reply = await patch(name, { fields: created.fields, indexes: [{ fields: ['status', '-views'] }] })
    expect(reply.status, reply.text).toBe(200)
    const handle = await server.app.registry.get(server.app.defaultProject.id)
    if (handle.kind === 'sqlite') {
      const stats = await sql<{ idx: string }>`select idx from sqlite_stat1 where tbl = ${name}`.execute(handle.db)
      expect(stats.rows.map((r) => r.idx)).toContain(reply.body.data.indexes[0].name)
    } else {
      const stats = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_user_tables where schemaname = ${handle.schema} and relname = ${name} and last_analyze is not null`.execute(
        handle.db,
      )
      expect(stats.rows[0]!.n).toBe(1)
    }
  })

  it('a unique compound index refuses a duplicate record with 409 already_exists', async () => {
    const name = uniqueName('ix_unique')
    await createCollection(server, owner.token, {
      name,
      fields: articleFields(),
      indexes: [{ fields: ['status', 'views'], unique: true }],
    })
    await createRecord(server, owner.token, name, { status: 'draft', views: 1 })
    await createRecord(server, owner.token, name, { status: 'published', views: 1 })
    const dup = await postRecord(server, owner.token, name, { status: 'draft', views: 1 })
    expect(dup.status, dup.text).toBe(409)
    expect(dup.body.error).toBe('already_exists')
  })

  it('a unique index the existing records break is 409 already_exists, and nothing changes', async () => {
    const name = uniqueName('ix_dups')
    const created = await createCollection(server, owner.token, { name, fields: articleFields() })
    await createRecord(server, owner.token, name, { status: 'draft', views: 1 })
    await createRecord(server, owner.token, name, { status: 'draft', views: 1 })
    const before = await indexDefinitions(server, name)
    const reply = await patch(name, {
      fields: [...created.fields, field('extra', 'text')],
      indexes: [{ fields: ['status', 'views'], unique: true }],
    })
    expect(reply.status, reply.text).toBe(409)
    expect(reply.body).toMatchObject({ error: 'already_exists', message: expect.stringContaining('(status, views)') })
    const after = await getCollection(server, owner.token, name)
    expect(after).toMatchObject({ schemaVersion: 1, indexes: [] })
    expect(after.columnStatuses.map((c: { name: string }) => c.name)).not.toContain('extra')
    expect([...(await indexDefinitions(server, name)).keys()].sort()).toEqual([...before.keys()].sort())
  })
})

describe('malformed indexes: 400 invalid_request naming the index, nothing written', () => {
  const cases: [label: string, indexes: unknown, details: Record<string, unknown>][] = [
    ['not a list', { fields: ['status'] }, { property: 'indexes', index: null }],
    ['more than 16', Array.from({ length: 17 }, () => ({ fields: ['status'] })), { property: 'indexes', index: 16 }],
    ['an entry that is not an object', ['status'], { property: 'indexes', index: 0 }],
    ['no fields', [{ fields: [] }], { property: 'indexes', index: 0 }],
    [
      'more than 8 fields',
      [
        {
          fields: [
            'title',
            'status',
            'views',
            'code',
            'created_at',
            'updated_at',
            'created_by',
            'updated_by',
            'owned_by',
          ],
        },
      ],
      { property: 'indexes', index: 0 },
    ],
    ['an unknown property', [{ fields: ['status'], where: 'x' }], { property: 'indexes', index: 0 }],
    ['unique not a boolean', [{ fields: ['status'], unique: 'yes' }], { property: 'indexes', index: 0 }],
    [
      'an unknown field',
      [{ fields: ['status'] }, { fields: ['nope'] }],
      { property: 'indexes', index: 1, field: 'nope' },
    ],
    ['a JSON field', [{ fields: ['status', 'meta'] }], { property: 'indexes', index: 0, field: 'meta' }],
    [
      'deleted_at (the condition of every index)',
      [{ fields: ['deleted_at'] }],
      { property: 'indexes', index: 0, field: 'deleted_at' },
    ],
    ['_version', [{ fields: ['_version'] }], { property: 'indexes', index: 0, field: '_version' }],
    ['id (ends every index already)', [{ fields: ['status', 'id'] }], { property: 'indexes', index: 0, field: 'id' }],
    [
      'a field twice in one index',
      [{ fields: ['status', '-status'] }],
      { property: 'indexes', index: 0, field: 'status' },
    ],
    [
      'two indexes over the same fields',
      [{ fields: ['status', 'views'] }, { fields: ['status', '-views'], unique: true }],
      { property: 'indexes', index: 1, duplicateOf: 0 },
    ],
    ['a bad name with a dash only', [{ fields: ['-'] }], { property: 'indexes', index: 0 }],
  ]

  it.each(cases)('POST: %s', async (_label, indexes, details) => {
    const name = uniqueName('ix_bad')
    const reply = await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      body: { name, fields: articleFields(), indexes },
    })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({ error: 'invalid_request', details })
    expect(Object.keys(reply.body).sort()).toEqual(['details', 'error', 'message'])
    expect((await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })).status).toBe(404)
    expect((await indexDefinitions(server, name)).size).toBe(0)
  })

  it.each(cases)('PATCH: %s', async (_label, indexes, details) => {
    const name = uniqueName('ix_badp')
    const created = await createCollection(server, owner.token, {
      name,
      fields: articleFields(),
      indexes: [{ fields: ['title', '-views'] }],
    })
    const before = await indexDefinitions(server, name)
    // A new field comes along: it must not be added either.
    const reply = await patch(name, { fields: [...created.fields, field('extra', 'integer')], indexes })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({ error: 'invalid_request', details })
    const after = await getCollection(server, owner.token, name)
    expect(after).toMatchObject({ schemaVersion: 1, indexes: created.indexes })
    expect(after.columnStatuses.map((c: { name: string }) => c.name)).not.toContain('extra')
    expect([...(await indexDefinitions(server, name)).entries()].sort()).toEqual([...before.entries()].sort())
  })
})
