import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import {
  client,
  createCollection,
  createRecord,
  expectError,
  freshName,
  listAll,
  nowSeconds,
  readRecord,
  recordId,
  recordsPath,
} from './records-fixtures.js'

let server: TestServer
let owner: Account
let admin: Account
let editor: Account
const { get, post, patch, del } = client(() => server)

// One collection of plain fields for create, get, update and delete.
const items = 'items'
const itemFields = [
  { name: 'title', type: 'text', required: true },
  { name: 'count', type: 'integer', required: false },
  { name: 'note', type: 'text', required: false, validationRules: { maxLength: 10 } },
  { name: 'meta', type: 'json', required: false },
  { name: 'tags', type: 'json', required: false },
]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  editor = await createAccount(server, owner.token, { role: 'editor' })
  await createCollection(server, owner.token, items, itemFields)
})
afterAll(async () => {
  await server?.stop()
})

const path = (id?: string, query?: Record<string, string | number | boolean>) => recordsPath(items, id, query)
const newItem = (body: Record<string, unknown> = {}) =>
  createRecord(server, owner.token, items, { title: 'an item', ...body })
const countItems = async (query: Record<string, string> = {}) =>
  (await get(path(undefined, { limit: 1, ...query }), owner.token)).body.total as number

describe('POST /records (create)', () => {
  it('answers 201 with the bare record and its system columns', async () => {
    const before = nowSeconds()
    const reply = await post(path(), owner.token, { title: 'First', count: 3, meta: { a: 1 } })
    const after = nowSeconds()
    expect(reply.status, reply.text).toBe(201)
    const record = reply.body
    expect(record).toEqual({
      id: expect.stringMatching(recordId),
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      created_by: owner.id,
      updated_by: owner.id,
      deleted_at: null,
      _version: 1,
      title: 'First',
      count: 3,
      note: null,
      meta: { a: 1 },
      tags: null,
    })
    expect(record.created_at).toBeGreaterThanOrEqual(before)
    expect(record.created_at).toBeLessThanOrEqual(after)
    expect(record.updated_at).toBe(record.created_at)
    expect(record).not.toHaveProperty('owned_by')
    // What was stored is what was answered.
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
  })

  it('two creates get two different ids', async () => {
    const a = await newItem()
    const b = await newItem()
    expect(a.id).not.toBe(b.id)
  })

  it('owned_by appears (null) once the collection uses owner scoping', async () => {
    const name = await createCollection(
      server,
      owner.token,
      freshName('private'),
      [{ name: 'title', type: 'text', required: false }],
      {
        accessControl: { preset: 'private' },
      },
    )
    const reply = await post(recordsPath(name), owner.token, { title: 'mine' })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toHaveProperty('owned_by', null)
    expect(reply.body.created_by).toBe(owner.id)
  })

  it('the owner may set id, created_at and updated_at, and they are stored', async () => {
    const id = `own${Date.now().toString(16)}`
    const reply = await post(path(), owner.token, {
      id,
      created_at: 1_000_000,
      updated_at: 1_000_500,
      title: 'imported',
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toMatchObject({ id, created_at: 1_000_000, updated_at: 1_000_500, _version: 1 })
    expect(await readRecord(server, owner.token, items, id)).toMatchObject({
      id,
      created_at: 1_000_000,
      updated_at: 1_000_500,
      title: 'imported',
    })
  })

  it('an admin may set them too', async () => {
    const id = `adm${Date.now().toString(16)}`
    const reply = await post(path(), admin.token, { id, created_at: 2_000_000, title: 'by admin' })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toMatchObject({ id, created_at: 2_000_000, created_by: admin.id })
    expect(await readRecord(server, owner.token, items, id)).toMatchObject({ id, created_at: 2_000_000 })
  })

  it('a duplicate id is 409 already_exists and the first record is untouched', async () => {
    const first = await newItem({ id: `dup${Date.now().toString(16)}`, title: 'original' })
    const reply = await post(path(), owner.token, { id: first.id, title: 'impostor' })
    expectError(reply, 409, 'already_exists')
    expect(await readRecord(server, owner.token, items, first.id)).toEqual(first)
  })

  it('an editor’s id, created_at and updated_at are stripped; the response shows what was stored', async () => {
    const wanted = `ed${Date.now().toString(16)}`
    const before = nowSeconds()
    const reply = await post(path(), editor.token, {
      id: wanted,
      created_at: 1000,
      updated_at: 2000,
      title: 'by editor',
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.id).toMatch(recordId)
    expect(reply.body.id).not.toBe(wanted)
    expect(reply.body.created_at).toBeGreaterThanOrEqual(before)
    expect(reply.body.updated_at).toBe(reply.body.created_at)
    expect(reply.body).toMatchObject({ created_by: editor.id, updated_by: editor.id, title: 'by editor' })
    expect(await readRecord(server, owner.token, items, reply.body.id)).toEqual(reply.body)
    expectError(await get(path(wanted), owner.token), 404, 'record_not_found')
  })

  it('system columns in the body (deleted_at, _version, created_by, updated_by, owned_by) are ignored', async () => {
    const reply = await post(path(), owner.token, {
      title: 'sneaky',
      deleted_at: 123,
      _version: 42,
      created_by: editor.id,
      updated_by: editor.id,
      owned_by: editor.id,
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toMatchObject({ deleted_at: null, _version: 1, created_by: owner.id, updated_by: owner.id })
    expect(reply.body).not.toHaveProperty('owned_by')
    // Not deleted: it is listed and readable.
    expect((await readRecord(server, owner.token, items, reply.body.id)).deleted_at).toBeNull()
  })

  describe('refusals create nothing', () => {
    const cases: { name: string; body: Record<string, unknown>; status: number; code: string; field?: string }[] = [
      { name: 'a required field missing', body: { count: 1 }, status: 400, code: 'missing_field', field: 'title' },
      { name: 'a required field null', body: { title: null }, status: 400, code: 'missing_field', field: 'title' },
      {
        name: 'an unknown field',
        body: { title: 'x', colour: 'red' },
        status: 400,
        code: 'invalid_field',
        field: 'colour',
      },
      {
        name: 'a value of the wrong type',
        body: { title: 'x', count: 'three' },
        status: 400,
        code: 'invalid_field',
        field: 'count',
      },
      {
        name: 'a failed validation rule',
        body: { title: 'x', note: 'far too long a note' },
        status: 422,
        code: 'validation_error',
        field: 'note',
      },
      {
        name: 'an owner id of a bad shape',
        body: { title: 'x', id: 'no spaces allowed' },
        status: 400,
        code: 'invalid_field',
        field: 'id',
      },
      {
        name: 'created_at not Unix seconds',
        body: { title: 'x', created_at: 'yesterday' },
        status: 400,
        code: 'invalid_field',
        field: 'created_at',
      },
      // No database stores U+0000 in text on PostgreSQL; both dialects refuse it alike.
      { name: 'U+0000 in text', body: { title: 'a\u0000b' }, status: 400, code: 'invalid_field', field: 'title' },
      {
        name: 'U+0000 in a JSON string',
        body: { title: 'x', meta: { k: ['a\u0000'] } },
        status: 400,
        code: 'invalid_field',
        field: 'meta',
      },
      {
        name: 'U+0000 in a JSON key',
        body: { title: 'x', meta: { 'a\u0000': 1 } },
        status: 400,
        code: 'invalid_field',
        field: 'meta',
      },
    ]
    for (const c of cases) {
      it(`${c.name} → ${c.status} ${c.code}`, async () => {
        const total = await countItems()
        const reply = await post(path(), owner.token, c.body)
        expectError(reply, c.status, c.code)
        if (c.field) expect(reply.body.details.field).toBe(c.field)
        expect(await countItems()).toBe(total)
      })
    }
  })
})

describe('GET /records/:id', () => {
  it('answers { data } with the record', async () => {
    const record = await newItem({ count: 7 })
    const reply = await get(path(record.id), owner.token)
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ data: record })
  })

  it('fields projects the record; id, created_at and updated_at always come', async () => {
    const record = await newItem({ count: 7, note: 'short' })
    const reply = await get(path(record.id, { fields: 'count' }), owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual({
      id: record.id,
      created_at: record.created_at,
      updated_at: record.updated_at,
      count: 7,
    })
    const two = await get(path(record.id, { fields: 'note,_version' }), owner.token)
    expect(two.body.data).toEqual({
      id: record.id,
      created_at: record.created_at,
      updated_at: record.updated_at,
      note: 'short',
      _version: 1,
    })
    expectError(await get(path(record.id, { fields: 'nope' }), owner.token), 400, 'invalid_request')
  })

  it('a soft-deleted record is 404 unless include_deleted=true, which the owner may use', async () => {
    const record = await newItem()
    expect((await del(path(record.id), owner.token)).status).toBe(200)
    expectError(await get(path(record.id), owner.token), 404, 'record_not_found')
    expectError(await get(path(record.id, { include_deleted: 'false' }), owner.token), 404, 'record_not_found')
    const reply = await get(path(record.id, { include_deleted: 'true' }), owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.id).toBe(record.id)
    expect(reply.body.data.deleted_at).toEqual(expect.any(Number))
  })

  it('an editor without view_deleted gets 403 for include_deleted', async () => {
    const record = await newItem()
    const reply = await get(path(record.id, { include_deleted: 'true' }), editor.token)
    expectError(reply, 403, 'forbidden')
    // The editor may read the same record without the flag.
    expect((await get(path(record.id), editor.token)).status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'a missing record',
        method: 'GET',
        path: recordsPath(items, 'f'.repeat(32)),
        as: () => owner.token,
        status: 404,
        contains: { error: 'record_not_found' },
      },
      {
        name: 'an unknown collection',
        method: 'GET',
        path: recordsPath('no_such_things', 'abc'),
        as: () => owner.token,
        status: 404,
        contains: { error: 'collection_not_found' },
      },
      {
        name: 'anonymous',
        method: 'GET',
        path: recordsPath(items, 'abc'),
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'include_deleted not a boolean',
        method: 'GET',
        path: recordsPath(items, 'abc', { include_deleted: 'maybe' }),
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})

describe('expand', () => {
  const authors = freshName('authors')
  const posts = freshName('posts')
  const comments = freshName('comments')
  let alice: Record<string, any>
  let bob: Record<string, any>

  beforeAll(async () => {
    await createCollection(server, owner.token, authors, [{ name: 'name', type: 'text', required: true }])
    await createCollection(server, owner.token, posts, [
      { name: 'title', type: 'text', required: true },
      {
        name: 'author',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: authors, relationType: 'belongsTo' },
      },
      {
        name: 'reviewers',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: authors, relationType: 'hasMany' },
      },
    ])
    await createCollection(server, owner.token, comments, [
      { name: 'body', type: 'text', required: true },
      {
        name: 'post',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: posts, relationType: 'belongsTo' },
      },
    ])
    alice = await createRecord(server, owner.token, authors, { name: 'Alice' })
    bob = await createRecord(server, owner.token, authors, { name: 'Bob' })
  })

  it('belongsTo expands to the record, hasMany to the records in their order', async () => {
    const post = await createRecord(server, owner.token, posts, {
      title: 'P',
      author: alice.id,
      reviewers: [bob.id, alice.id],
    })
    // Unexpanded, the fields hold ids.
    expect(await readRecord(server, owner.token, posts, post.id)).toMatchObject({
      author: alice.id,
      reviewers: [bob.id, alice.id],
    })
    const data = await readRecord(server, owner.token, posts, post.id, { expand: 'author,reviewers' })
    expect(data.author).toEqual(alice)
    expect(data.reviewers).toEqual([bob, alice])
    // Only what was asked for is expanded.
    expect((await readRecord(server, owner.token, posts, post.id, { expand: 'author' })).reviewers).toEqual([
      bob.id,
      alice.id,
    ])
  })

  it('belongsTo is null when empty or when the target is gone; hasMany leaves out the missing', async () => {
    const empty = await createRecord(server, owner.token, posts, { title: 'no author' })
    const none = await readRecord(server, owner.token, posts, empty.id, { expand: 'author,reviewers' })
    expect(none.author).toBeNull()
    expect(none.reviewers).toEqual([])
    const carol = await createRecord(server, owner.token, authors, { name: 'Carol' })
    const post = await createRecord(server, owner.token, posts, {
      title: 'Q',
      author: carol.id,
      reviewers: [carol.id, bob.id],
    })
    expect((await del(recordsPath(authors, carol.id), owner.token)).status).toBe(200)
    const data = await readRecord(server, owner.token, posts, post.id, { expand: 'author,reviewers' })
    expect(data.author).toBeNull()
    expect(data.reviewers).toEqual([bob])
  })

  it('nested dot paths expand level by level', async () => {
    const post = await createRecord(server, owner.token, posts, { title: 'R', author: bob.id, reviewers: [alice.id] })
    const comment = await createRecord(server, owner.token, comments, { body: 'nice', post: post.id })
    const data = await readRecord(server, owner.token, comments, comment.id, { expand: 'post.author,post.reviewers' })
    expect(data.post).toMatchObject({ id: post.id, title: 'R', author: bob, reviewers: [alice] })
    // Without the nested path, the inner relation stays an id.
    const shallow = await readRecord(server, owner.token, comments, comment.id, { expand: 'post' })
    expect(shallow.post).toMatchObject({ id: post.id, author: bob.id })
  })

  it('a field that is not a relation, or no field at all, is 400', async () => {
    const post = await createRecord(server, owner.token, posts, { title: 'S' })
    expectError(await get(recordsPath(posts, post.id, { expand: 'title' }), owner.token), 400, 'invalid_request')
    expectError(await get(recordsPath(posts, post.id, { expand: 'nothing' }), owner.token), 400, 'invalid_request')
    expectError(await get(recordsPath(posts, post.id, { expand: 'author.name' }), owner.token), 400, 'invalid_request')
  })
})

describe('PATCH /records/:id (update)', () => {
  it('changes the fields sent and answers the whole record with _version + 1', async () => {
    const record = await newItem({ title: 'before', count: 1, meta: { keep: true } })
    const reply = await patch(path(record.id), editor.token, { count: 2 })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      ...record,
      count: 2,
      _version: 2,
      updated_by: editor.id,
      updated_at: expect.any(Number),
    })
    expect(reply.body.updated_at).toBeGreaterThanOrEqual(record.updated_at)
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(reply.body)
    // A field may be cleared.
    const cleared = await patch(path(record.id), owner.token, { meta: null, count: null })
    expect(cleared.body).toMatchObject({ meta: null, count: null, _version: 3, title: 'before' })
  })

  it('deleted_at and other system columns in the body are silently ignored', async () => {
    const record = await newItem()
    const reply = await patch(path(record.id), owner.token, {
      title: 'renamed',
      deleted_at: 12345,
      created_at: 5,
      created_by: editor.id,
      id: 'other',
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({
      id: record.id,
      title: 'renamed',
      deleted_at: null,
      created_at: record.created_at,
      created_by: owner.id,
      _version: 2,
    })
    expect((await readRecord(server, owner.token, items, record.id)).deleted_at).toBeNull()
    expect(await listAll(server, owner.token, items, { filter: JSON.stringify({ id: record.id }) })).toHaveLength(1)
  })

  describe('JSON operators', () => {
    it('$set creates the objects on its path', async () => {
      const record = await newItem()
      const one = await patch(path(record.id), owner.token, { $set: { 'meta.size': 2 } })
      expect(one.status, one.text).toBe(200)
      expect(one.body.meta).toEqual({ size: 2 })
      const two = await patch(path(record.id), owner.token, { $set: { 'meta.dims.w': 3, 'meta.dims.h': 4 } })
      expect(two.body.meta).toEqual({ size: 2, dims: { w: 3, h: 4 } })
      const three = await patch(path(record.id), owner.token, { $set: { 'meta.size': { exact: 2.5 } } })
      expect(three.body.meta).toEqual({ size: { exact: 2.5 }, dims: { w: 3, h: 4 } })
      expect(three.body._version).toBe(4)
      expect((await readRecord(server, owner.token, items, record.id)).meta).toEqual({
        size: { exact: 2.5 },
        dims: { w: 3, h: 4 },
      })
    })

    it('$set on the field itself replaces it', async () => {
      const record = await newItem({ meta: { old: 1 } })
      const reply = await patch(path(record.id), owner.token, { $set: { meta: { fresh: true } } })
      expect(reply.body.meta).toEqual({ fresh: true })
    })

    it('$push appends (creating the array), $pull removes every equal element', async () => {
      const record = await newItem()
      let reply = await patch(path(record.id), owner.token, { $push: { tags: 'a' } })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.tags).toEqual(['a'])
      for (const value of ['b', 'a', { x: 1 }]) {
        reply = await patch(path(record.id), owner.token, { $push: { tags: value } })
        expect(reply.status, reply.text).toBe(200)
      }
      expect(reply.body.tags).toEqual(['a', 'b', 'a', { x: 1 }])
      reply = await patch(path(record.id), owner.token, { $pull: { tags: 'a' } })
      expect(reply.body.tags).toEqual(['b', { x: 1 }])
      reply = await patch(path(record.id), owner.token, { $pull: { tags: { x: 1 } } })
      expect(reply.body.tags).toEqual(['b'])
      // Nested arrays are created on the way too.
      reply = await patch(path(record.id), owner.token, { $push: { 'meta.list.items': 1 } })
      expect(reply.body.meta).toEqual({ list: { items: [1] } })
      expect(await readRecord(server, owner.token, items, record.id)).toMatchObject({
        tags: ['b'],
        meta: { list: { items: [1] } },
        _version: 8,
      })
    })

    it('$unset removes a key', async () => {
      const record = await newItem({ meta: { size: 2, colour: 'red', deep: { a: 1, b: 2 } } })
      const reply = await patch(path(record.id), owner.token, { $unset: { 'meta.size': true, 'meta.deep.a': true } })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.meta).toEqual({ colour: 'red', deep: { b: 2 } })
      expect((await readRecord(server, owner.token, items, record.id)).meta).toEqual({ colour: 'red', deep: { b: 2 } })
    })

    it('operators and plain fields combine in one update', async () => {
      const record = await newItem({ tags: ['x'] })
      const reply = await patch(path(record.id), owner.token, {
        title: 'both',
        $push: { tags: 'y' },
        $set: { 'meta.k': 'v' },
      })
      expect(reply.body).toMatchObject({ title: 'both', tags: ['x', 'y'], meta: { k: 'v' }, _version: 2 })
    })

    const refusals: { name: string; seed: Record<string, unknown>; body: Record<string, unknown> }[] = [
      { name: '$push onto a number', seed: { meta: { size: 2 } }, body: { $push: { 'meta.size': 3 } } },
      { name: '$push onto an object', seed: { meta: { size: 2 } }, body: { $push: { meta: 3 } } },
      { name: '$pull from a string', seed: { tags: 'not a list' }, body: { $pull: { tags: 'n' } } },
      { name: '$set through a number', seed: { meta: { size: 2 } }, body: { $set: { 'meta.size.deep': 1 } } },
      { name: '$set on a field that is not JSON', seed: {}, body: { $set: { 'title.x': 1 } } },
      { name: 'a path with a bad segment', seed: {}, body: { $set: { 'meta.__proto__.x': 1 } } },
      { name: 'an operator that is not an object', seed: {}, body: { $set: ['meta.a'] } },
    ]
    for (const r of refusals) {
      it(`${r.name} → 400 and nothing changes`, async () => {
        const record = await newItem(r.seed)
        const reply = await patch(path(record.id), owner.token, r.body)
        expect(reply.status, reply.text).toBe(400)
        expect(['invalid_request', 'invalid_field']).toContain(reply.body.error)
        expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
      })
    }

    it('an operator on an unknown field is 400 invalid_field', async () => {
      const record = await newItem()
      expectError(await patch(path(record.id), owner.token, { $set: { 'nope.a': 1 } }), 400, 'invalid_field')
    })
  })

  describe('optimistic concurrency', () => {
    it('If-Match with the current version succeeds (bare, quoted or weak)', async () => {
      const record = await newItem()
      let reply = await patch(path(record.id), owner.token, { count: 1 }, { 'If-Match': '1' })
      expect(reply.status, reply.text).toBe(200)
      reply = await patch(path(record.id), owner.token, { count: 2 }, { 'If-Match': '"2"' })
      expect(reply.status, reply.text).toBe(200)
      reply = await patch(path(record.id), owner.token, { count: 3 }, { 'If-Match': 'W/"3"' })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({ count: 3, _version: 4 })
    })

    it('If-Match with another version is 412 precondition_failed and nothing changes', async () => {
      const record = await newItem({ count: 1 })
      await patch(path(record.id), owner.token, { count: 2 })
      const current = await readRecord(server, owner.token, items, record.id)
      const reply = await patch(path(record.id), owner.token, { count: 99 }, { 'If-Match': '1' })
      expectError(reply, 412, 'precondition_failed')
      expect(await readRecord(server, owner.token, items, record.id)).toEqual(current)
    })

    it('?version= with another version is 409 conflict and nothing changes; the current one succeeds', async () => {
      const record = await newItem({ count: 1 })
      const reply = await patch(path(record.id, { version: 5 }), owner.token, { count: 99 })
      expectError(reply, 409, 'conflict')
      expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
      const ok = await patch(path(record.id, { version: 1 }), owner.token, { count: 2 })
      expect(ok.status, ok.text).toBe(200)
      expect(ok.body).toMatchObject({ count: 2, _version: 2 })
    })

    it('_version in the body with another version is 409 conflict; the current one succeeds and is not stored as sent', async () => {
      const record = await newItem({ count: 1 })
      const reply = await patch(path(record.id), owner.token, { count: 99, _version: 0 })
      expectError(reply, 409, 'conflict')
      expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
      const ok = await patch(path(record.id), owner.token, { count: 2, _version: 1 })
      expect(ok.status, ok.text).toBe(200)
      expect(ok.body).toMatchObject({ count: 2, _version: 2 })
      const stale = await patch(path(record.id), owner.token, { count: 3, _version: 1 })
      expectError(stale, 409, 'conflict')
      expect((await readRecord(server, owner.token, items, record.id)).count).toBe(2)
    })

    it('a malformed If-Match is 400', async () => {
      const record = await newItem()
      expectError(
        await patch(path(record.id), owner.token, { count: 1 }, { 'If-Match': 'yesterday' }),
        400,
        'invalid_request',
      )
      expectError(await patch(path(record.id), owner.token, { count: 1, _version: 'one' }), 400, 'invalid_request')
      expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
    })
  })

  describe('refusals', () => {
    it('an unknown or soft-deleted record is 404 record_not_found', async () => {
      expectError(await patch(path('f'.repeat(32)), owner.token, { count: 1 }), 404, 'record_not_found')
      const record = await newItem()
      await del(path(record.id), owner.token)
      expectError(await patch(path(record.id), owner.token, { count: 1 }), 404, 'record_not_found')
      expect((await readRecord(server, owner.token, items, record.id, { include_deleted: 'true' })).count).toBeNull()
    })

    const cases: { name: string; body: Record<string, unknown>; status: number; code: string }[] = [
      { name: 'an unknown field', body: { colour: 'red' }, status: 400, code: 'invalid_field' },
      { name: 'a wrong type', body: { count: 'many' }, status: 400, code: 'invalid_field' },
      { name: 'a required field set to null', body: { title: null }, status: 400, code: 'missing_field' },
      {
        name: 'a failed validation rule',
        body: { note: 'far too long a note' },
        status: 422,
        code: 'validation_error',
      },
      { name: 'U+0000 in text', body: { note: '\u0000' }, status: 400, code: 'invalid_field' },
      { name: 'U+0000 set into JSON', body: { $set: { 'meta.k': 'a\u0000' } }, status: 400, code: 'invalid_field' },
    ]
    for (const c of cases) {
      it(`${c.name} → ${c.status} ${c.code}, nothing changes`, async () => {
        const record = await newItem()
        expectError(await patch(path(record.id), owner.token, c.body), c.status, c.code)
        expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
      })
    }

    it('an unknown collection is 404 collection_not_found', async () => {
      expectError(await patch(recordsPath('no_such_things', 'abc'), owner.token, { a: 1 }), 404, 'collection_not_found')
    })
  })
})

describe('DELETE /records/:id and restore', () => {
  it('deletes softly by default: gone from reads and lists, present with include_deleted', async () => {
    const record = await newItem({ title: 'to delete' })
    const reply = await del(path(record.id), owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, permanent: false })
    expectError(await get(path(record.id), owner.token), 404, 'record_not_found')
    const filter = JSON.stringify({ id: record.id })
    expect(await listAll(server, owner.token, items, { filter })).toEqual([])
    const withDeleted = await listAll(server, owner.token, items, { filter, include_deleted: 'true' })
    expect(withDeleted).toHaveLength(1)
    expect(withDeleted[0]).toMatchObject({
      id: record.id,
      title: 'to delete',
      deleted_at: expect.any(Number),
      updated_by: owner.id,
    })
  })

  it('deleting it again is 404 record_not_found', async () => {
    const record = await newItem()
    expect((await del(path(record.id), owner.token)).status).toBe(200)
    expectError(await del(path(record.id), owner.token), 404, 'record_not_found')
  })

  it('an unknown record is 404, an unknown collection 404 collection_not_found', async () => {
    expectError(await del(path('f'.repeat(32)), owner.token), 404, 'record_not_found')
    expectError(await del(recordsPath('no_such_things', 'abc'), owner.token), 404, 'collection_not_found')
  })

  it('permanent=true removes the row for good: not even include_deleted finds it, restore is 404', async () => {
    const record = await newItem()
    const reply = await del(path(record.id, { permanent: 'true' }), owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, permanent: true })
    expectError(await get(path(record.id, { include_deleted: 'true' }), owner.token), 404, 'record_not_found')
    expectError(await post(`${path(record.id)}/restore`, owner.token), 404, 'record_not_found')
    expectError(await del(path(record.id, { permanent: 'true' }), owner.token), 404, 'record_not_found')
  })

  it('permanent=true also purges an already soft-deleted row', async () => {
    const record = await newItem()
    await del(path(record.id), owner.token)
    const reply = await del(path(record.id, { permanent: 'true' }), owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, permanent: true })
    expectError(await get(path(record.id, { include_deleted: 'true' }), owner.token), 404, 'record_not_found')
    expectError(await post(`${path(record.id)}/restore`, owner.token), 404, 'record_not_found')
  })

  it('restore brings a soft-deleted record back', async () => {
    const record = await newItem({ title: 'phoenix' })
    await del(path(record.id), owner.token)
    const reply = await post(`${path(record.id)}/restore`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true })
    const back = await readRecord(server, owner.token, items, record.id)
    expect(back).toMatchObject({ id: record.id, title: 'phoenix', deleted_at: null })
    expect(await listAll(server, owner.token, items, { filter: JSON.stringify({ id: record.id }) })).toHaveLength(1)
  })

  it('restoring a record that is not deleted, or missing, gives the same 404', async () => {
    const record = await newItem()
    const active = await post(`${path(record.id)}/restore`, owner.token)
    const missing = await post(`${path('f'.repeat(32))}/restore`, owner.token)
    expectError(active, 404, 'record_not_found')
    expectError(missing, 404, 'record_not_found')
    expect(active.body).toEqual(missing.body)
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
  })

  it('restore in an unknown collection is 404 collection_not_found', async () => {
    expectError(await post(`${recordsPath('no_such_things', 'abc')}/restore`, owner.token), 404, 'collection_not_found')
  })

  it('permanent must be a boolean', async () => {
    const record = await newItem()
    expectError(await del(path(record.id, { permanent: 'yes' }), owner.token), 400, 'invalid_request')
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
  })
})

describe('relations onDelete', () => {
  const people = freshName('people')
  const pets = freshName('pets')
  const limbs = freshName('limbs')
  const nails = freshName('nails')
  const deeds = freshName('deeds')
  const guards = freshName('guards')
  const clubs = freshName('clubs')
  const casts = freshName('casts')
  const person = (name = 'P') => createRecord(server, owner.token, people, { name })
  const permanently = (collection: string, id: string) =>
    del(recordsPath(collection, id, { permanent: 'true' }), owner.token)

  beforeAll(async () => {
    await createCollection(server, owner.token, people, [{ name: 'name', type: 'text', required: true }])
    // set-null (the default), cascade, restrict, a required set-null (counts as restrict), hasMany.
    await createCollection(server, owner.token, pets, [
      { name: 'name', type: 'text', required: true },
      {
        name: 'owner',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: people, relationType: 'belongsTo' },
      },
    ])
    await createCollection(server, owner.token, limbs, [
      { name: 'name', type: 'text', required: true },
      {
        name: 'body',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: people, relationType: 'belongsTo', onDelete: 'cascade' },
      },
    ])
    await createCollection(server, owner.token, nails, [
      {
        name: 'limb',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: limbs, relationType: 'belongsTo', onDelete: 'cascade' },
      },
    ])
    await createCollection(server, owner.token, deeds, [
      {
        name: 'holder',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: people, relationType: 'belongsTo', onDelete: 'restrict' },
      },
    ])
    await createCollection(server, owner.token, guards, [
      {
        name: 'ward',
        type: 'relation',
        required: true,
        relationConfig: { targetCollection: people, relationType: 'belongsTo' },
      },
    ])
    await createCollection(server, owner.token, casts, [
      {
        name: 'limb',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: limbs, relationType: 'belongsTo', onDelete: 'restrict' },
      },
    ])
    await createCollection(server, owner.token, clubs, [
      {
        name: 'members',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: people, relationType: 'hasMany' },
      },
    ])
  })

  it('set-null clears belongsTo references on a permanent delete', async () => {
    const p = await person()
    const other = await person('other')
    const pet = await createRecord(server, owner.token, pets, { name: 'Rex', owner: p.id })
    const unrelated = await createRecord(server, owner.token, pets, { name: 'Tom', owner: other.id })
    expect((await permanently(people, p.id)).status).toBe(200)
    expect(await readRecord(server, owner.token, pets, pet.id)).toMatchObject({ name: 'Rex', owner: null })
    expect(await readRecord(server, owner.token, pets, unrelated.id)).toMatchObject({ owner: other.id })
  })

  it('a permanent delete also reaches soft-deleted referencing records, which may be restored later', async () => {
    const p = await person()
    const pet = await createRecord(server, owner.token, pets, { name: 'Rex', owner: p.id })
    const limb = await createRecord(server, owner.token, limbs, { name: 'arm', body: p.id })
    const club = await createRecord(server, owner.token, clubs, { members: [p.id] })
    for (const [collection, id] of [
      [pets, pet.id],
      [limbs, limb.id],
      [clubs, club.id],
    ] as const) {
      expect((await del(recordsPath(collection, id), owner.token)).status).toBe(200)
    }
    expect((await permanently(people, p.id)).status).toBe(200)
    // set-null cleared the soft-deleted pet's owner: restored, it points at nothing.
    expect((await post(`${recordsPath(pets, pet.id)}/restore`, owner.token)).status).toBe(200)
    expect(await readRecord(server, owner.token, pets, pet.id)).toMatchObject({ name: 'Rex', owner: null })
    // cascade removed the soft-deleted limb: nothing is left to restore.
    expectError(
      await get(recordsPath(limbs, limb.id, { include_deleted: 'true' }), owner.token),
      404,
      'record_not_found',
    )
    expectError(await post(`${recordsPath(limbs, limb.id)}/restore`, owner.token), 404, 'record_not_found')
    // the soft-deleted club lost the id.
    expect((await post(`${recordsPath(clubs, club.id)}/restore`, owner.token)).status).toBe(200)
    expect((await readRecord(server, owner.token, clubs, club.id)).members).toEqual([])
  })

  it('a soft delete leaves references as they are; restore makes them expand again', async () => {
    const p = await person('Sleeper')
    const pet = await createRecord(server, owner.token, pets, { name: 'Rex', owner: p.id })
    const limb = await createRecord(server, owner.token, limbs, { name: 'arm', body: p.id })
    expect((await del(recordsPath(people, p.id), owner.token)).status).toBe(200)
    expect(await readRecord(server, owner.token, pets, pet.id)).toEqual(pet)
    expect(await readRecord(server, owner.token, limbs, limb.id)).toEqual(limb)
    expect((await readRecord(server, owner.token, pets, pet.id, { expand: 'owner' })).owner).toBeNull()
    expect((await post(`${recordsPath(people, p.id)}/restore`, owner.token)).status).toBe(200)
    expect((await readRecord(server, owner.token, pets, pet.id, { expand: 'owner' })).owner).toMatchObject({
      id: p.id,
      name: 'Sleeper',
    })
  })

  it('cascade deletes the referencing records, through every level', async () => {
    const p = await person()
    const arm = await createRecord(server, owner.token, limbs, { name: 'arm', body: p.id })
    const leg = await createRecord(server, owner.token, limbs, { name: 'leg', body: p.id })
    const nail = await createRecord(server, owner.token, nails, { limb: arm.id })
    const keep = await createRecord(server, owner.token, limbs, { name: 'spare', body: (await person('other')).id })
    expect((await permanently(people, p.id)).status).toBe(200)
    for (const [collection, id] of [
      [limbs, arm.id],
      [limbs, leg.id],
      [nails, nail.id],
    ] as const) {
      expectError(
        await get(recordsPath(collection, id, { include_deleted: 'true' }), owner.token),
        404,
        'record_not_found',
      )
    }
    expect(await readRecord(server, owner.token, limbs, keep.id)).toEqual(keep)
  })

  it('restrict refuses the delete (409 conflict), soft or permanent, and nothing changes anywhere', async () => {
    const p = await person('Holder')
    const deed = await createRecord(server, owner.token, deeds, { holder: p.id })
    const pet = await createRecord(server, owner.token, pets, { name: 'Rex', owner: p.id })
    const limb = await createRecord(server, owner.token, limbs, { name: 'arm', body: p.id })
    expectError(await del(recordsPath(people, p.id), owner.token), 409, 'conflict')
    expectError(await permanently(people, p.id), 409, 'conflict')
    expect(await readRecord(server, owner.token, people, p.id)).toEqual(p)
    expect(await readRecord(server, owner.token, deeds, deed.id)).toEqual(deed)
    expect(await readRecord(server, owner.token, pets, pet.id)).toEqual(pet)
    expect(await readRecord(server, owner.token, limbs, limb.id)).toEqual(limb)
    // Once the reference is gone, the delete goes through.
    expect((await patch(recordsPath(deeds, deed.id), owner.token, { holder: null })).status).toBe(200)
    expect((await permanently(people, p.id)).status).toBe(200)
    expect(await readRecord(server, owner.token, pets, pet.id)).toMatchObject({ owner: null })
  })

  it('a soft-deleted record does not restrict', async () => {
    const p = await person()
    const deed = await createRecord(server, owner.token, deeds, { holder: p.id })
    expect((await del(recordsPath(deeds, deed.id), owner.token)).status).toBe(200)
    expect((await permanently(people, p.id)).status).toBe(200)
    expectError(await get(recordsPath(people, p.id, { include_deleted: 'true' }), owner.token), 404, 'record_not_found')
  })

  it('restrict deeper in a cascade refuses the whole delete', async () => {
    const p = await person()
    const arm = await createRecord(server, owner.token, limbs, { name: 'arm', body: p.id })
    const leg = await createRecord(server, owner.token, limbs, { name: 'leg', body: p.id })
    const pet = await createRecord(server, owner.token, pets, { name: 'Rex', owner: p.id })
    // The person cascades to its limbs, but a cast still holds the leg.
    const cast = await createRecord(server, owner.token, casts, { limb: leg.id })
    expectError(await permanently(people, p.id), 409, 'conflict')
    expect(await readRecord(server, owner.token, people, p.id)).toEqual(p)
    expect(await readRecord(server, owner.token, limbs, arm.id)).toEqual(arm)
    expect(await readRecord(server, owner.token, limbs, leg.id)).toEqual(leg)
    expect(await readRecord(server, owner.token, pets, pet.id)).toEqual(pet)
    expect(await readRecord(server, owner.token, casts, cast.id)).toEqual(cast)
    // With the cast gone (permanently), the cascade goes through.
    expect((await permanently(casts, cast.id)).status).toBe(200)
    expect((await permanently(people, p.id)).status).toBe(200)
    expectError(
      await get(recordsPath(limbs, leg.id, { include_deleted: 'true' }), owner.token),
      404,
      'record_not_found',
    )
  })

  it('a required belongsTo with set-null counts as restrict', async () => {
    const p = await person()
    const guard = await createRecord(server, owner.token, guards, { ward: p.id })
    expectError(await permanently(people, p.id), 409, 'conflict')
    expect(await readRecord(server, owner.token, guards, guard.id)).toEqual(guard)
    expect(await readRecord(server, owner.token, people, p.id)).toEqual(p)
  })

  it('hasMany references lose the id', async () => {
    const a = await person('a')
    const b = await person('b')
    const c = await person('c')
    const club = await createRecord(server, owner.token, clubs, { members: [a.id, b.id, c.id] })
    expect((await permanently(people, b.id)).status).toBe(200)
    expect((await readRecord(server, owner.token, clubs, club.id)).members).toEqual([a.id, c.id])
    // A soft delete leaves the list as it is.
    expect((await del(recordsPath(people, a.id), owner.token)).status).toBe(200)
    expect((await readRecord(server, owner.token, clubs, club.id)).members).toEqual([a.id, c.id])
  })
})
