import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import {
  client,
  createCollection,
  createRecord,
  expectError,
  freshName,
  listAll,
  readRecord,
  recordsPath,
} from './records-fixtures.js'

let server: TestServer
let owner: Account
let editor: Account
let projectId: string
const { get, post, patch, del } = client(() => server)

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  projectId = server.app.defaultProject.id
})
afterAll(async () => {
  await server?.stop()
})

type Query = Record<string, string | number | boolean>
const list = (collection: string, query: Query = {}, token = owner.token) =>
  get(recordsPath(collection, undefined, query), token)
const namesOf = (records: Record<string, any>[]) => records.map((r) => r.name as string)
const sorted = (names: string[]) => [...names].sort()

/**
 * One collection of every kind of field, six records. Five are the owner's with fixed created_at (1001…1005),
 * the sixth ("date") the editor's, created now.
 */
const things = 'things'

async function seedThings(): Promise<void> {
  await createCollection(server, owner.token, things, [
    { name: 'name', type: 'text', required: true },
    { name: 'n', type: 'integer', required: false },
    { name: 'score', type: 'number', required: false },
    { name: 'active', type: 'boolean', required: false },
    { name: 'day', type: 'date', required: false },
    { name: 'due', type: 'datetime', required: false },
    { name: 'tags', type: 'json', required: false },
    { name: 'meta', type: 'json', required: false },
    { name: 'note', type: 'text', required: false },
    { name: 'role_name', type: 'text', required: false },
    { name: 'project', type: 'text', required: false },
  ])
  const rows: Record<string, unknown>[] = [
    {
      created_at: 1001,
      name: 'apple',
      n: 1,
      score: 1.5,
      active: true,
      day: '2000-01-01',
      due: 1000,
      tags: ['red', 'fruit'],
      meta: { size: 1, kind: 'x' },
      note: 'hello world',
      role_name: 'super_admin',
      project: projectId,
    },
    {
      created_at: 1002,
      name: 'Banana',
      n: 2,
      score: 2.5,
      active: false,
      day: '2999-12-31',
      due: 32_503_680_000,
      tags: ['yellow', 'fruit'],
      meta: { size: 2 },
      note: '',
      role_name: 'editor',
      project: 'another',
    },
    { created_at: 1003, name: 'cherry', n: 3 },
    {
      created_at: 1004,
      name: 'apricot',
      n: 4,
      score: 4,
      active: true,
      day: '2020-05-05',
      due: 2000,
      tags: ['orange'],
      meta: { size: 3, kind: 'y' },
      note: 'world peace',
      role_name: 'super_admin',
    },
    {
      created_at: 1005,
      name: 'Éclair',
      n: 5,
      score: -1,
      active: false,
      tags: 'fruit',
      meta: { kind: 'x' },
      note: 'HELLO',
    },
  ]
  for (const row of rows) await createRecord(server, owner.token, things, row)
  await createRecord(server, editor.token, things, { name: 'date', n: 6, note: 'dated', role_name: 'editor' })
}

beforeAll(seedThings)

describe('the list envelope and paging', () => {
  it('answers { data, total, page, limit, hasMore } with defaults page 1, limit 25, newest first', async () => {
    const reply = await list(things)
    expect(reply.status, reply.text).toBe(200)
    expect(Object.keys(reply.body).sort()).toEqual(['data', 'hasMore', 'limit', 'page', 'total'])
    expect(reply.body).toMatchObject({ total: 6, page: 1, limit: 25, hasMore: false })
    expect(namesOf(reply.body.data)).toEqual(['date', 'Éclair', 'apricot', 'cherry', 'Banana', 'apple'])
    // Records are the same as a single read answers.
    const first = reply.body.data[0]
    expect(await readRecord(server, owner.token, things, first.id)).toEqual(first)
  })

  it('pages through with page and limit; the pages together are the whole list', async () => {
    const p1 = await list(things, { limit: 4 })
    const p2 = await list(things, { limit: 4, page: 2 })
    const p3 = await list(things, { limit: 4, page: 3 })
    expect(p1.body).toMatchObject({ total: 6, page: 1, limit: 4, hasMore: true })
    expect(p2.body).toMatchObject({ total: 6, page: 2, limit: 4, hasMore: false })
    expect(p3.body).toMatchObject({ data: [], total: 6, page: 3, limit: 4, hasMore: false })
    expect(namesOf([...p1.body.data, ...p2.body.data])).toEqual([
      'date',
      'Éclair',
      'apricot',
      'cherry',
      'Banana',
      'apple',
    ])
    const exact = await list(things, { limit: 3, page: 2 })
    expect(exact.body).toMatchObject({ total: 6, hasMore: false })
    expect(exact.body.data).toHaveLength(3)
  })

  it('the total counts what the filter keeps, not the page', async () => {
    const reply = await list(things, { limit: 1, filter: JSON.stringify({ n: { _lte: 3 } }) })
    expect(reply.body).toMatchObject({ total: 3, hasMore: true })
    expect(reply.body.data).toHaveLength(1)
  })

  it('limit 100 is allowed; 101, 0, page 0 and non-numbers are 400', async () => {
    expect((await list(things, { limit: 100 })).body).toMatchObject({ limit: 100, total: 6 })
    for (const query of [{ limit: 101 }, { limit: 0 }, { page: 0 }, { page: 'two' }, { limit: 'lots' }] as Query[]) {
      expectError(await list(things, query), 400, 'invalid_request')
    }
  })

  it('an unknown collection is 404 collection_not_found; anonymous is 401', async () => {
    expectError(await list('no_such_things'), 404, 'collection_not_found')
    expectError(await get(recordsPath(things)), 401, 'unauthorized')
  })
})

describe('sorting', () => {
  const cases: { name: string; query: Query; expected: string[] }[] = [
    {
      name: 'default: created_at descending',
      query: {},
      expected: ['date', 'Éclair', 'apricot', 'cherry', 'Banana', 'apple'],
    },
    {
      name: 'created_at ascending',
      query: { sortBy: 'created_at', order: 'asc' },
      expected: ['apple', 'Banana', 'cherry', 'apricot', 'Éclair', 'date'],
    },
    {
      name: 'order=asc alone sorts created_at ascending',
      query: { order: 'asc' },
      expected: ['apple', 'Banana', 'cherry', 'apricot', 'Éclair', 'date'],
    },
    {
      name: 'a field, descending by default',
      query: { sortBy: 'n' },
      expected: ['date', 'Éclair', 'apricot', 'cherry', 'Banana', 'apple'],
    },
    {
      name: 'a field ascending',
      query: { sortBy: 'n', order: 'asc' },
      expected: ['apple', 'Banana', 'cherry', 'apricot', 'Éclair', 'date'],
    },
    {
      name: 'a leading - means descending and wins over order',
      query: { sortBy: '-n', order: 'asc' },
      expected: ['date', 'Éclair', 'apricot', 'cherry', 'Banana', 'apple'],
    },
    {
      name: 'text by code point, ascending',
      query: { sortBy: 'name', order: 'asc' },
      expected: ['Banana', 'apple', 'apricot', 'cherry', 'date', 'Éclair'],
    },
    {
      name: 'text by code point, descending',
      query: { sortBy: '-name' },
      expected: ['Éclair', 'date', 'cherry', 'apricot', 'apple', 'Banana'],
    },
  ]
  for (const c of cases) {
    it(c.name, async () => {
      const reply = await list(things, c.query)
      expect(reply.status, reply.text).toBe(200)
      expect(namesOf(reply.body.data)).toEqual(c.expected)
    })
  }

  it('empty values sort before the others going up (nulls smallest, as indexes order them)', async () => {
    const names = namesOf((await list(things, { sortBy: 'score', order: 'asc' })).body.data)
    expect(sorted(names.slice(0, 2))).toEqual(['cherry', 'date'])
    expect(names.slice(2)).toEqual(['Éclair', 'apple', 'Banana', 'apricot'])
    const down = namesOf((await list(things, { sortBy: 'score', order: 'desc' })).body.data)
    expect(down.slice(0, 4)).toEqual(['apricot', 'Banana', 'apple', 'Éclair'])
    expect(sorted(down.slice(4))).toEqual(['cherry', 'date'])
  })

  it('sorting applies before paging', async () => {
    const p2 = await list(things, { sortBy: 'name', order: 'asc', limit: 2, page: 2 })
    expect(namesOf(p2.body.data)).toEqual(['apricot', 'cherry'])
  })

  it('an unknown sort field, a JSON field or a bad order is 400', async () => {
    expectError(await list(things, { sortBy: 'nope' }), 400, 'invalid_request')
    expectError(await list(things, { sortBy: '-nope' }), 400, 'invalid_request')
    expectError(await list(things, { sortBy: 'meta' }), 400, 'invalid_request')
    expectError(await list(things, { order: 'sideways' }), 400, 'invalid_request')
  })
})

describe('filter', () => {
  const objectCases: { name: string; filter: unknown; expected: string[] }[] = [
    { name: 'shorthand equality', filter: { name: 'apple' }, expected: ['apple'] },
    { name: '_eq', filter: { name: { _eq: 'apple' } }, expected: ['apple'] },
    { name: '_neq', filter: { name: { _neq: 'apple' } }, expected: ['Banana', 'cherry', 'apricot', 'Éclair', 'date'] },
    { name: '_gt', filter: { n: { _gt: 3 } }, expected: ['apricot', 'Éclair', 'date'] },
    { name: '_gte', filter: { n: { _gte: 3 } }, expected: ['cherry', 'apricot', 'Éclair', 'date'] },
    { name: '_lt', filter: { n: { _lt: 2 } }, expected: ['apple'] },
    { name: '_lte', filter: { n: { _lte: 2 } }, expected: ['apple', 'Banana'] },
    { name: '_in', filter: { name: { _in: ['apple', 'cherry', 'zucchini'] } }, expected: ['apple', 'cherry'] },
    {
      name: '_nin',
      filter: { name: { _nin: ['apple', 'cherry'] } },
      expected: ['Banana', 'apricot', 'Éclair', 'date'],
    },
    { name: '_contains (case-sensitive)', filter: { note: { _contains: 'hello' } }, expected: ['apple'] },
    { name: '_contains on text', filter: { note: { _contains: 'world' } }, expected: ['apple', 'apricot'] },
    {
      name: '_contains on JSON: array member or substring',
      filter: { tags: { _contains: 'fruit' } },
      expected: ['apple', 'Banana', 'Éclair'],
    },
    { name: '_ncontains', filter: { note: { _ncontains: 'world' } }, expected: ['Banana', 'Éclair', 'date'] },
    { name: '_starts_with', filter: { name: { _starts_with: 'ap' } }, expected: ['apple', 'apricot'] },
    {
      name: '_nstarts_with',
      filter: { name: { _nstarts_with: 'ap' } },
      expected: ['Banana', 'cherry', 'Éclair', 'date'],
    },
    { name: '_ends_with', filter: { name: { _ends_with: 'y' } }, expected: ['cherry'] },
    {
      name: '_nends_with',
      filter: { name: { _nends_with: 'e' } },
      expected: ['Banana', 'cherry', 'apricot', 'Éclair'],
    },
    { name: '_null', filter: { note: { _null: true } }, expected: ['cherry'] },
    { name: '_nnull', filter: { note: { _nnull: true } }, expected: ['apple', 'Banana', 'apricot', 'Éclair', 'date'] },
    { name: 'two operators on one field', filter: { n: { _gt: 1, _lt: 4 } }, expected: ['Banana', 'cherry'] },
    { name: 'two fields are ANDed', filter: { active: true, n: { _gt: 1 } }, expected: ['apricot'] },
    { name: '_and', filter: { _and: [{ n: { _gt: 1 } }, { n: { _lt: 4 } }] }, expected: ['Banana', 'cherry'] },
    { name: '_or', filter: { _or: [{ n: 1 }, { n: 6 }] }, expected: ['apple', 'date'] },
    {
      name: '_or of _and',
      filter: { _or: [{ _and: [{ active: true }, { n: { _gt: 2 } }] }, { name: 'Banana' }] },
      expected: ['Banana', 'apricot'],
    },
    { name: 'a boolean', filter: { active: false }, expected: ['Banana', 'Éclair'] },
    { name: 'a decimal', filter: { score: { _lt: 0 } }, expected: ['Éclair'] },
    { name: 'a date as text', filter: { day: { _gte: '2020-01-01' } }, expected: ['Banana', 'apricot'] },
    { name: 'a path into JSON (number)', filter: { 'meta.size': { _gte: 2 } }, expected: ['Banana', 'apricot'] },
    { name: 'a path into JSON (string)', filter: { 'meta.kind': 'x' }, expected: ['apple', 'Éclair'] },
    { name: 'a system column', filter: { created_at: { _lte: 1002 } }, expected: ['apple', 'Banana'] },
  ]
  for (const c of objectCases) {
    it(`object format: ${c.name}`, async () => {
      const reply = await list(things, { filter: JSON.stringify(c.filter) })
      expect(reply.status, reply.text).toBe(200)
      expect(sorted(namesOf(reply.body.data))).toEqual(sorted(c.expected))
      expect(reply.body.total).toBe(c.expected.length)
    })
  }

  const arrayCases: { name: string; filter: unknown[]; expected: string[] }[] = [
    { name: 'eq', filter: [{ field: 'name', op: 'eq', value: 'apple' }], expected: ['apple'] },
    {
      name: 'neq',
      filter: [{ field: 'name', op: 'neq', value: 'apple' }],
      expected: ['Banana', 'cherry', 'apricot', 'Éclair', 'date'],
    },
    { name: 'gt', filter: [{ field: 'n', op: 'gt', value: 4 }], expected: ['Éclair', 'date'] },
    { name: 'gte', filter: [{ field: 'n', op: 'gte', value: 4 }], expected: ['apricot', 'Éclair', 'date'] },
    { name: 'lt', filter: [{ field: 'n', op: 'lt', value: 2 }], expected: ['apple'] },
    { name: 'lte', filter: [{ field: 'n', op: 'lte', value: 2 }], expected: ['apple', 'Banana'] },
    { name: 'contains', filter: [{ field: 'note', op: 'contains', value: 'world' }], expected: ['apple', 'apricot'] },
    {
      name: 'starts_with',
      filter: [{ field: 'name', op: 'starts_with', value: 'ap' }],
      expected: ['apple', 'apricot'],
    },
    { name: 'ends_with', filter: [{ field: 'name', op: 'ends_with', value: 'a' }], expected: ['Banana'] },
    {
      name: 'between (inclusive)',
      filter: [{ field: 'n', op: 'between', value: 2, valueTo: 4 }],
      expected: ['Banana', 'cherry', 'apricot'],
    },
    {
      name: 'between dates',
      filter: [{ field: 'day', op: 'between', value: '2000-01-01', valueTo: '2020-12-31' }],
      expected: ['apple', 'apricot'],
    },
    {
      name: 'in as a comma-separated list',
      filter: [{ field: 'name', op: 'in', value: 'apple, cherry,zucchini' }],
      expected: ['apple', 'cherry'],
    },
    {
      name: 'empty: null or the empty string',
      filter: [{ field: 'note', op: 'empty' }],
      expected: ['Banana', 'cherry'],
    },
    {
      name: 'not_empty',
      filter: [{ field: 'note', op: 'not_empty' }],
      expected: ['apple', 'apricot', 'Éclair', 'date'],
    },
    {
      name: 'conditions are ANDed',
      filter: [
        { field: 'n', op: 'gt', value: 1 },
        { field: 'active', op: 'eq', value: true },
      ],
      expected: ['apricot'],
    },
    { name: 'a path into JSON', filter: [{ field: 'meta.size', op: 'lte', value: 2 }], expected: ['apple', 'Banana'] },
  ]
  for (const c of arrayCases) {
    it(`array format: ${c.name}`, async () => {
      const reply = await list(things, { filter: JSON.stringify(c.filter) })
      expect(reply.status, reply.text).toBe(200)
      expect(sorted(namesOf(reply.body.data))).toEqual(sorted(c.expected))
    })
  }

  it('an empty filter ({} or []) keeps everything', async () => {
    expect((await list(things, { filter: '{}' })).body.total).toBe(6)
    expect((await list(things, { filter: '[]' })).body.total).toBe(6)
  })

  describe('dynamic variables', () => {
    const cases: { name: string; filter: unknown; as: 'owner' | 'editor'; expected: string[] }[] = [
      {
        name: '$CURRENT_USER (owner)',
        filter: { created_by: { _eq: '$CURRENT_USER' } },
        as: 'owner',
        expected: ['apple', 'Banana', 'cherry', 'apricot', 'Éclair'],
      },
      { name: '$CURRENT_USER (editor)', filter: { created_by: '$CURRENT_USER' }, as: 'editor', expected: ['date'] },
      {
        name: '$CURRENT_USER in the array format',
        filter: [{ field: 'created_by', op: 'eq', value: '$CURRENT_USER' }],
        as: 'editor',
        expected: ['date'],
      },
      {
        name: '$CURRENT_ROLE (owner)',
        filter: { role_name: '$CURRENT_ROLE' },
        as: 'owner',
        expected: ['apple', 'apricot'],
      },
      {
        name: '$CURRENT_ROLE (editor)',
        filter: { role_name: { _eq: '$CURRENT_ROLE' } },
        as: 'editor',
        expected: ['Banana', 'date'],
      },
      { name: '$PROJECT_ID', filter: { project: '$PROJECT_ID' }, as: 'owner', expected: ['apple'] },
      { name: '$NOW (before)', filter: { due: { _lt: '$NOW' } }, as: 'owner', expected: ['apple', 'apricot'] },
      { name: '$NOW (after)', filter: { due: { _gt: '$NOW' } }, as: 'owner', expected: ['Banana'] },
      {
        name: '$NOW in the array format',
        filter: [{ field: 'due', op: 'lte', value: '$NOW' }],
        as: 'owner',
        expected: ['apple', 'apricot'],
      },
      {
        name: '$NOW_DATE (before)',
        filter: { day: { _lt: '$NOW_DATE' } },
        as: 'owner',
        expected: ['apple', 'apricot'],
      },
      { name: '$NOW_DATE (after)', filter: { day: { _gt: '$NOW_DATE' } }, as: 'owner', expected: ['Banana'] },
      {
        name: 'a variable in an _in list',
        filter: { created_by: { _in: ['$CURRENT_USER'] } },
        as: 'editor',
        expected: ['date'],
      },
    ]
    for (const c of cases) {
      it(c.name, async () => {
        const token = c.as === 'owner' ? owner.token : editor.token
        const reply = await list(things, { filter: JSON.stringify(c.filter) }, token)
        expect(reply.status, reply.text).toBe(200)
        expect(sorted(namesOf(reply.body.data))).toEqual(sorted(c.expected))
      })
    }
  })

  describe('invalid filters are 400 invalid_request', () => {
    const cases: { name: string; filter: string }[] = [
      { name: 'malformed JSON', filter: '{"name": ' },
      { name: 'not an object or array', filter: '5' },
      { name: 'an unknown field', filter: '{"colour":"red"}' },
      { name: 'an unknown field in the array format', filter: '[{"field":"colour","op":"eq","value":"red"}]' },
      { name: 'an unknown operator', filter: '{"name":{"_like":"a%"}}' },
      { name: 'an unknown op in the array format', filter: '[{"field":"name","op":"like","value":"a"}]' },
      { name: 'a path into a text field', filter: '{"name.first":"a"}' },
      { name: 'an unknown variable', filter: '{"created_by":"$CURRENT_USR"}' },
      { name: '_in without an array', filter: '{"name":{"_in":"apple"}}' },
      { name: '_null with false', filter: '{"note":{"_null":false}}' },
      { name: 'between without valueTo', filter: '[{"field":"n","op":"between","value":1}]' },
      { name: '_or that is not an array', filter: '{"_or":{"n":1}}' },
    ]
    for (const c of cases) {
      it(c.name, async () => {
        expectError(await list(things, { filter: c.filter }), 400, 'invalid_request')
      })
    }
  })
})

describe('fields, path and include_deleted', () => {
  it('fields projects every record; id, created_at and updated_at always come', async () => {
    const reply = await list(things, { fields: 'name,n', sortBy: 'n', order: 'asc', limit: 2 })
    expect(reply.status, reply.text).toBe(200)
    for (const record of reply.body.data)
      expect(Object.keys(record).sort()).toEqual(['created_at', 'id', 'n', 'name', 'updated_at'])
    expect(reply.body.data.map((r: any) => r.n)).toEqual([1, 2])
    expectError(await list(things, { fields: 'name,colour' }), 400, 'invalid_request')
  })

  it('path returns { id, path, value } per record, null where the path is missing', async () => {
    const reply = await list(things, { path: 'meta.size', sortBy: 'n', order: 'asc' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ total: 6, page: 1, limit: 25, hasMore: false })
    const all = await listAll(server, owner.token, things, { sortBy: 'n', order: 'asc' })
    expect(reply.body.data).toEqual(
      all.map((r, i) => ({ id: r.id, path: 'meta.size', value: [1, 2, null, 3, null, null][i] })),
    )
    const plain = await list(things, { path: 'name', sortBy: 'n', order: 'asc', limit: 2 })
    expect(plain.body.data).toEqual(all.slice(0, 2).map((r) => ({ id: r.id, path: 'name', value: r.name })))
    const object = await list(things, { path: 'meta', filter: JSON.stringify({ name: 'apricot' }) })
    expect(object.body.data).toEqual([{ id: expect.any(String), path: 'meta', value: { size: 3, kind: 'y' } }])
  })

  it('a path that names no field is 400', async () => {
    expectError(await list(things, { path: 'colour.size' }), 400, 'invalid_request')
  })

  it('include_deleted lists soft-deleted records for the owner; an editor without view_deleted gets 403', async () => {
    const name = await createCollection(server, owner.token, freshName('bin'), [
      { name: 'name', type: 'text', required: true },
    ])
    const kept = await createRecord(server, owner.token, name, { name: 'kept' })
    const gone = await createRecord(server, owner.token, name, { name: 'gone' })
    expect((await del(recordsPath(name, gone.id), owner.token)).status).toBe(200)
    expect((await list(name)).body).toMatchObject({ total: 1, data: [{ id: kept.id }] })
    const withDeleted = await list(name, { include_deleted: 'true' })
    expect(withDeleted.body.total).toBe(2)
    expect(sorted(namesOf(withDeleted.body.data))).toEqual(['gone', 'kept'])
    expect(withDeleted.body.data.find((r: any) => r.id === gone.id).deleted_at).toEqual(expect.any(Number))
    expectError(await list(name, { include_deleted: 'true' }, editor.token), 403, 'forbidden')
    expect((await list(name, {}, editor.token)).body.total).toBe(1)
  })
})

describe('search', () => {
  const docs = freshName('docs')
  const search = (q: string, query: Query = {}) => list(docs, { search: q, ...query })
  const found = async (q: string, query: Query = {}) => {
    const reply = await search(q, query)
    expect(reply.status, reply.text).toBe(200)
    return sorted(reply.body.data.map((r: any) => r.title as string))
  }

  beforeAll(async () => {
    await createCollection(server, owner.token, docs, [
      { name: 'title', type: 'text', required: true },
      { name: 'body', type: 'richtext', required: false },
      { name: 'rank', type: 'integer', required: false },
    ])
    await createRecord(server, owner.token, docs, { title: 'Quick brown fox', body: 'jumps over', rank: 1 })
    await createRecord(server, owner.token, docs, { title: 'Lazy dog', body: 'sleeps all day', rank: 2 })
    await createRecord(server, owner.token, docs, { title: 'Brown bear', body: 'eats honey', rank: 3 })
  })

  it('finds words in any text-like field, case-insensitively', async () => {
    expect(await found('brown')).toEqual(['Brown bear', 'Quick brown fox'])
    expect(await found('BROWN')).toEqual(['Brown bear', 'Quick brown fox'])
    expect(await found('honey')).toEqual(['Brown bear'])
    expect(await found('nothing')).toEqual([])
  })

  it('matches word prefixes', async () => {
    expect(await found('bro')).toEqual(['Brown bear', 'Quick brown fox'])
    expect(await found('sle')).toEqual(['Lazy dog'])
    // A prefix, not a substring.
    expect(await found('rown')).toEqual([])
  })

  it('several words must all match, in any field and order', async () => {
    expect(await found('brown fox')).toEqual(['Quick brown fox'])
    expect(await found('fox brown')).toEqual(['Quick brown fox'])
    expect(await found('bear honey')).toEqual(['Brown bear'])
    expect(await found('fox honey')).toEqual([])
  })

  it('combines with filter, sort and paging', async () => {
    expect(await found('brown', { filter: JSON.stringify({ rank: { _gt: 1 } }) })).toEqual(['Brown bear'])
    const page = await search('brown', { sortBy: 'rank', order: 'asc', limit: 1 })
    expect(page.body).toMatchObject({ total: 2, hasMore: true })
    expect(page.body.data.map((r: any) => r.title)).toEqual(['Quick brown fox'])
  })

  it('stays in step with updates: new words are found, old ones no longer', async () => {
    const record = await createRecord(server, owner.token, docs, { title: 'Purple platypus' })
    expect(await found('platypus')).toEqual(['Purple platypus'])
    expect((await patch(recordsPath(docs, record.id), owner.token, { title: 'Green gecko' })).status).toBe(200)
    expect(await found('gecko')).toEqual(['Green gecko'])
    expect(await found('platypus')).toEqual([])
    expect(await found('purple')).toEqual([])
  })

  it('stays in step with deletes, soft and permanent', async () => {
    const soft = await createRecord(server, owner.token, docs, { title: 'Orange orca' })
    const hard = await createRecord(server, owner.token, docs, { title: 'Silver salmon' })
    expect((await del(recordsPath(docs, soft.id), owner.token)).status).toBe(200)
    expect(await found('orca')).toEqual([])
    expect(await found('orca', { include_deleted: 'true' })).toEqual(['Orange orca'])
    expect((await post(`${recordsPath(docs, soft.id)}/restore`, owner.token)).status).toBe(200)
    expect(await found('orca')).toEqual(['Orange orca'])
    expect((await del(recordsPath(docs, hard.id, { permanent: 'true' }), owner.token)).status).toBe(200)
    expect(await found('salmon', { include_deleted: 'true' })).toEqual([])
    // A record created after the purge is found by its own words only.
    await createRecord(server, owner.token, docs, { title: 'Teal trout' })
    expect(await found('trout')).toEqual(['Teal trout'])
    expect(await found('salmon', { include_deleted: 'true' })).toEqual([])
  })

  it('a collection without text fields, or a search without a word, is 400', async () => {
    const numbers = await createCollection(server, owner.token, freshName('numbers'), [
      { name: 'n', type: 'integer', required: false },
    ])
    expectError(await list(numbers, { search: 'one' }), 400, 'invalid_request')
    expectError(await search('!!!'), 400, 'invalid_request')
  })
})

describe('expand in lists', () => {
  const teams = freshName('teams')
  const people = freshName('people')

  it('expands every record of the page, sharing targets and leaving empty ones null or []', async () => {
    await createCollection(server, owner.token, teams, [{ name: 'name', type: 'text', required: true }])
    await createCollection(server, owner.token, people, [
      { name: 'name', type: 'text', required: true },
      {
        name: 'team',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: teams, relationType: 'belongsTo' },
      },
      {
        name: 'friends',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: teams, relationType: 'hasMany' },
      },
    ])
    const red = await createRecord(server, owner.token, teams, { name: 'red' })
    const blue = await createRecord(server, owner.token, teams, { name: 'blue' })
    const rows = [
      { name: 'p1', team: red.id, friends: [blue.id] },
      { name: 'p2', team: blue.id, friends: [red.id, blue.id] },
      { name: 'p3', team: red.id },
      { name: 'p4' },
    ]
    for (const row of rows) await createRecord(server, owner.token, people, row)
    const reply = await list(people, { expand: 'team,friends', sortBy: 'name', order: 'asc' })
    expect(reply.status, reply.text).toBe(200)
    const byName = Object.fromEntries(reply.body.data.map((r: any) => [r.name, r]))
    expect(byName.p1.team).toEqual(red)
    expect(byName.p1.friends).toEqual([blue])
    expect(byName.p2.team).toEqual(blue)
    expect(byName.p2.friends).toEqual([red, blue])
    expect(byName.p3.team).toEqual(red)
    expect(byName.p3.friends).toEqual([])
    expect(byName.p4.team).toBeNull()
    expect(byName.p4.friends).toEqual([])
  })

  it('a non-relation field is 400, even on an empty page', async () => {
    expectError(await list(people, { expand: 'name' }), 400, 'invalid_request')
    expectError(
      await list(people, { expand: 'name', filter: JSON.stringify({ name: 'nobody' }) }),
      400,
      'invalid_request',
    )
    expectError(
      await list(people, { expand: 'team.name', filter: JSON.stringify({ name: 'p4' }) }),
      400,
      'invalid_request',
    )
  })
})

describe('locale (translatable fields)', () => {
  const menu = freshName('menu')
  let apple: Record<string, any>
  let zucchini: Record<string, any>
  let pear: Record<string, any>

  beforeAll(async () => {
    await createCollection(server, owner.token, menu, [
      { name: 'title', type: 'text', required: false, translatable: true },
      { name: 'n', type: 'integer', required: false },
    ])
    apple = await createRecord(server, owner.token, menu, { title: { en: 'Apple', de: 'Apfel', fr: 'Pomme' }, n: 1 })
    zucchini = await createRecord(server, owner.token, menu, { title: { en: 'Zucchini', de: 'Zucchini' }, n: 2 })
    // A plain string lands in the request's locale.
    const reply = await post(`${recordsPath(menu)}?locale=de`, owner.token, { title: 'Birne', n: 3 })
    expect(reply.status, reply.text).toBe(201)
    pear = reply.body
  })

  const titles = async (query: Query) => {
    const reply = await list(menu, { sortBy: 'n', order: 'asc', ...query })
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data.map((r: any) => r.title)
  }

  it('reads the value in the locale asked for, the project default (en) otherwise, with no fallback', async () => {
    expect(apple.title).toBe('Apple')
    expect(pear.title).toBe('Birne')
    expect(await titles({})).toEqual(['Apple', 'Zucchini', null])
    expect(await titles({ locale: 'en' })).toEqual(['Apple', 'Zucchini', null])
    expect(await titles({ locale: 'de' })).toEqual(['Apfel', 'Zucchini', 'Birne'])
    expect(await titles({ locale: 'fr' })).toEqual(['Pomme', null, null])
    expect((await readRecord(server, owner.token, menu, apple.id, { locale: 'fr' })).title).toBe('Pomme')
  })

  it('* answers the whole locale map', async () => {
    expect(await titles({ locale: '*' })).toEqual([
      { en: 'Apple', de: 'Apfel', fr: 'Pomme' },
      { en: 'Zucchini', de: 'Zucchini' },
      { de: 'Birne' },
    ])
  })

  it('sorting compares the locale’s value', async () => {
    const byTitle = async (locale: string, order: string) =>
      namesByN(await list(menu, { locale, sortBy: 'title', order }))
    const namesByN = (reply: any) => reply.body.data.map((r: any) => r.n)
    expect(await byTitle('de', 'asc')).toEqual([1, 3, 2]) // Apfel, Birne, Zucchini
    expect(await byTitle('de', 'desc')).toEqual([2, 3, 1])
    expect(await byTitle('fr', 'desc')).toEqual([1, expect.any(Number), expect.any(Number)]) // the two without fr last
  })

  it('filtering compares the locale’s value', async () => {
    const ns = async (filter: unknown, locale?: string) => {
      const reply = await list(menu, {
        filter: JSON.stringify(filter),
        sortBy: 'n',
        order: 'asc',
        ...(locale ? { locale } : {}),
      })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.data.map((r: any) => r.n)
    }
    expect(await ns({ title: 'Apfel' }, 'de')).toEqual([1])
    expect(await ns({ title: 'Apfel' }, 'en')).toEqual([])
    expect(await ns({ title: 'Apfel' })).toEqual([])
    expect(await ns({ title: { _starts_with: 'Z' } }, 'de')).toEqual([2])
    expect(await ns({ title: { _null: true } }, 'fr')).toEqual([2, 3])
    expect(await ns([{ field: 'title', op: 'eq', value: 'Pomme' }], 'fr')).toEqual([1])
  })

  it('an update with a plain string changes only the request’s locale', async () => {
    const reply = await patch(`${recordsPath(menu, zucchini.id)}?locale=fr`, owner.token, { title: 'Courgette' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.title).toBe('Courgette')
    expect((await readRecord(server, owner.token, menu, zucchini.id, { locale: '*' })).title).toEqual({
      en: 'Zucchini',
      de: 'Zucchini',
      fr: 'Courgette',
    })
    expect((await readRecord(server, owner.token, menu, zucchini.id, { locale: 'fr' })).title).toBe('Courgette')
  })

  it('a locale that is not BCP-47 is 400', async () => {
    expectError(await list(menu, { locale: 'not a locale' }), 400, 'invalid_request')
  })
})
