import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/lib/errors.js'
import type { RecordEvent } from '../../src/modules/records/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll, recordsPath } from './records-fixtures.js'

// DELETE /api/v1/collections/:name/records/bulk (core-api § Record endpoints, § Limits): up to 200 ids,
// row rules respected, soft by default; what is not deletable is simply not counted.

let server: TestServer
let owner: Account
let editor: Account
let viewer: Account
/** Deletes only records it created (item_filter on created_by). */
let mine: Account

const bulk = (collection: string, token: string | undefined, body: unknown, query = ''): Promise<Reply> =>
  server.request('DELETE', `/api/v1/collections/${collection}/records/bulk${query}`, {
    token,
    ...(body === undefined ? {} : { body }),
  })

/** The stored row as an administrator sees it (deleted ones too), or null when it is gone. */
async function stored(collection: string, id: string): Promise<Record<string, any> | null> {
  const reply = await server.request('GET', recordsPath(collection, id, { include_deleted: 'true' }), {
    token: owner.token,
  })
  if (reply.status === 404) return null
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

async function notesWith(
  titles: string[],
  token = owner.token,
  collection?: string,
): Promise<{ name: string; ids: string[] }> {
  const name =
    collection ??
    (await createCollection(server, owner.token, freshName('bulk'), [{ name: 'title', type: 'text', required: true }]))
  const ids: string[] = []
  for (const title of titles) ids.push((await createRecord(server, token, name, { title })).id)
  return { name, ids }
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'own_deleter' } })
  expect(role.status, role.text).toBe(201)
  const grants = [
    { resource: 'collections/*', action: 'read' },
    { resource: 'collections/*', action: 'create' },
    { resource: 'collections/*', action: 'delete', item_filter: { created_by: { _eq: '$CURRENT_USER' } } },
  ]
  const put = await server.request('PUT', `/api/v1/roles/${role.body.data.id}/grants`, {
    token: owner.token,
    body: { grants },
  })
  expect(put.status, put.text).toBe(200)
  mine = await createAccount(server, owner.token, { role: 'own_deleter' })
})
afterAll(async () => {
  await server?.stop()
})

describe('soft delete (the default)', () => {
  it('deletes the records named, answers { deleted }, and leaves the others alone', async () => {
    const { name, ids } = await notesWith(['a', 'b', 'c', 'd'])
    const reply = await bulk(name, editor.token, { ids: ids.slice(0, 3) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ deleted: 3 })
    for (const id of ids.slice(0, 3)) {
      expectError(await server.request('GET', recordsPath(name, id), { token: owner.token }), 404, 'record_not_found')
      const row = await stored(name, id)
      expect(row?.deleted_at).toEqual(expect.any(Number))
      expect(row?.updated_by).toBe(editor.id)
      expect(row?._version).toBe(2)
    }
    expect((await listAll(server, owner.token, name)).map((r) => r.id)).toEqual([ids[3]])
    // Restorable like any soft-deleted record.
    const restored = await server.request('POST', `${recordsPath(name, ids[0])}/restore`, { token: owner.token })
    expect(restored.status, restored.text).toBe(200)
  })

  it('unknown, already deleted and repeated ids are not counted', async () => {
    const { name, ids } = await notesWith(['a', 'b', 'c'])
    expect((await bulk(name, owner.token, { ids: [ids[0]] })).body).toEqual({ deleted: 1 })
    const reply = await bulk(name, owner.token, {
      ids: [ids[0], ids[1], ids[1], 'nosuchrecord', '0123456789abcdef0123456789abcdef'],
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ deleted: 1 })
    expect((await listAll(server, owner.token, name)).map((r) => r.id)).toEqual([ids[2]])
  })

  it('nothing deletable is 200 { deleted: 0 }', async () => {
    const { name } = await notesWith(['a'])
    const reply = await bulk(name, owner.token, { ids: ['missing_1', 'missing_2'] })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ deleted: 0 })
    expect(await listAll(server, owner.token, name)).toHaveLength(1)
  })

  it('fires one record.delete per deleted record, with the record as it was', async () => {
    const { name, ids } = await notesWith(['x', 'y', 'z'])
    const seen: RecordEvent[] = []
    const stop = server.app.events.on('record.delete', (event) => void (event.collection === name && seen.push(event)))
    try {
      expect((await bulk(name, editor.token, { ids: [ids[0], ids[1], 'missing'] })).body).toEqual({ deleted: 2 })
    } finally {
      stop()
    }
    expect(seen.map((e) => e.before?.id).sort()).toEqual([ids[0], ids[1]].sort())
    for (const event of seen) {
      expect(event.after).toBeNull()
      expect(event.before).toMatchObject({ deleted_at: null })
      expect(event.principal).toEqual({ id: editor.id, kind: 'user', role: 'editor' })
    }
  })
})

describe('row rules', () => {
  it('a grant limited to own records deletes only those; the rest are not counted and stay', async () => {
    const name = await createCollection(server, owner.token, freshName('bulk'), [
      { name: 'title', type: 'text', required: true },
    ])
    const own = await notesWith(['mine 1', 'mine 2'], mine.token, name)
    const theirs = await notesWith(['theirs'], owner.token, name)
    const reply = await bulk(name, mine.token, { ids: [...own.ids, ...theirs.ids] })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ deleted: 2 })
    expect((await listAll(server, owner.token, name)).map((r) => r.id)).toEqual(theirs.ids)
  })

  it('on a private collection a member deletes only what they own', async () => {
    const name = await createCollection(
      server,
      owner.token,
      freshName('bulk'),
      [{ name: 'title', type: 'text', required: true }],
      { accessControl: { preset: 'private' } },
    )
    const own = await notesWith(['editor note'], editor.token, name)
    const others = await notesWith(['owner note'], owner.token, name)
    expect((await bulk(name, editor.token, { ids: [...own.ids, ...others.ids] })).body).toEqual({ deleted: 1 })
    expect((await stored(name, others.ids[0]!))?.deleted_at).toBeNull()
  })

  it('without the delete grant: 403 for a viewer, 401 for an anonymous caller; nothing deleted', async () => {
    const { name, ids } = await notesWith(['a', 'b'])
    const refused = await bulk(name, viewer.token, { ids })
    expectError(refused, 403, 'forbidden')
    expect(refused.body.message).toContain(`collections/${name}:delete`)
    expectError(await bulk(name, undefined, { ids }), 401, 'unauthorized')
    expect(await listAll(server, owner.token, name)).toHaveLength(2)
  })

  it('an unknown collection is 404 collection_not_found', async () => {
    expectError(await bulk('no_such_collection', owner.token, { ids: ['a'] }), 404, 'collection_not_found')
  })
})

describe('the request', () => {
  it('200 ids are accepted; 201 are 400 invalid_request naming the limit, and nothing is deleted', async () => {
    const { name, ids } = await notesWith(['a', 'b'])
    const padding = Array.from({ length: 198 }, (_, i) => `pad_${i}`)
    const atLimit = await bulk(name, owner.token, { ids: [ids[0], ...padding, 'one_more'].slice(0, 200) })
    expect(atLimit.status, atLimit.text).toBe(200)
    expect(atLimit.body).toEqual({ deleted: 1 })

    const over = await bulk(name, owner.token, { ids: [ids[1], ...padding, 'x', 'y'] })
    expectError(over, 400, 'invalid_request')
    expect(over.body.message).toMatch(/at most 200 ids/)
    expect((await stored(name, ids[1]!))?.deleted_at).toBeNull()
  })

  // Each body also names a real record, which must survive the refusal.
  const bad: [string, (id: string) => unknown][] = [
    ['an empty list', () => ({ ids: [] })],
    ['no ids key', (id) => ({ id })],
    ['ids not a list', (id) => ({ ids: id })],
    ['a number among the ids', (id) => ({ ids: [id, 7] })],
    ['an id with a space', (id) => ({ ids: [id, 'abc def'] })],
    ['an id of 65 characters', (id) => ({ ids: [id, 'a'.repeat(65)] })],
    ['an empty id', (id) => ({ ids: [id, ''] })],
  ]
  for (const [label, body] of bad) {
    it(`${label} is 400 invalid_request and deletes nothing`, async () => {
      const { name, ids } = await notesWith(['keep'])
      expectError(await bulk(name, owner.token, body(ids[0]!)), 400, 'invalid_request')
      expect(await listAll(server, owner.token, name)).toHaveLength(1)
    })
  }

  it('no body at all is 400, not a record called "bulk"', async () => {
    const { name } = await notesWith(['keep'])
    expectError(await bulk(name, owner.token, undefined), 400, 'invalid_request')
    // A record may be called "bulk" (an administrator chose the id): reads reach it, and DELETE
    // …/records/bulk is the bulk route, which deletes it when asked by id.
    const made = await server.request('POST', recordsPath(name), {
      token: owner.token,
      body: { id: 'bulk', title: 'named bulk' },
    })
    expect(made.status, made.text).toBe(201)
    expect((await server.request('GET', recordsPath(name, 'bulk'), { token: owner.token })).status).toBe(200)
    expect((await bulk(name, owner.token, { ids: ['bulk'] })).body).toEqual({ deleted: 1 })
  })
})

describe('refusals before anything is written', () => {
  it('a blocking hook refusing one record refuses the whole request', async () => {
    const { name, ids } = await notesWith(['fine', 'locked', 'fine too'])
    const remove = server.app.records.hooks.add((write) => {
      if (write.action === 'delete' && write.collection.name === name && write.before?.title === 'locked')
        throw new AppError('validation_error', 'locked notes stay')
    })
    try {
      const reply = await bulk(name, owner.token, { ids })
      expectError(reply, 422, 'validation_error')
      expect(reply.body.message).toBe('locked notes stay')
    } finally {
      remove()
    }
    expect(await listAll(server, owner.token, name)).toHaveLength(3)
  })

  it('a restrict relation still pointing at one record refuses all of them with 409 conflict', async () => {
    const parents = await notesWith(['p1', 'p2'])
    const children = await createCollection(server, owner.token, freshName('kids'), [
      { name: 'title', type: 'text', required: true },
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents.name, relationType: 'belongsTo', onDelete: 'restrict' },
      },
    ])
    await createRecord(server, owner.token, children, { title: 'kid', parent: parents.ids[1] })
    const reply = await bulk(parents.name, owner.token, { ids: parents.ids })
    expectError(reply, 409, 'conflict')
    expect(reply.body.message).toContain(children)
    expect(await listAll(server, owner.token, parents.name)).toHaveLength(2)
  })
})

describe('permanent=true', () => {
  it('removes the records, soft-deleted ones included, and applies onDelete cascade', async () => {
    const parents = await notesWith(['p1', 'p2', 'p3'])
    const children = await createCollection(server, owner.token, freshName('kids'), [
      { name: 'title', type: 'text', required: true },
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents.name, relationType: 'belongsTo', onDelete: 'cascade' },
      },
    ])
    const kid = await createRecord(server, owner.token, children, { title: 'kid', parent: parents.ids[0] })
    const other = await createRecord(server, owner.token, children, { title: 'other', parent: parents.ids[2] })
    expect((await bulk(parents.name, owner.token, { ids: [parents.ids[1]] })).body).toEqual({ deleted: 1 })

    const reply = await bulk(
      parents.name,
      owner.token,
      { ids: [parents.ids[0], parents.ids[1], 'missing'] },
      '?permanent=true',
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ deleted: 2 })
    expect(await stored(parents.name, parents.ids[0]!)).toBeNull()
    expect(await stored(parents.name, parents.ids[1]!)).toBeNull()
    expect(await stored(parents.name, parents.ids[2]!)).not.toBeNull()
    expect(await stored(children, kid.id)).toBeNull()
    expect(await stored(children, other.id)).not.toBeNull()
  })

  it('removes the shares of the records it removes', async () => {
    const name = await createCollection(
      server,
      owner.token,
      freshName('bulk'),
      [{ name: 'title', type: 'text', required: true }],
      {
        accessControl: { preset: 'private', sharing: true },
      },
    )
    const { ids } = await notesWith(['shared'], owner.token, name)
    const share = await server.request('POST', `${recordsPath(name, ids[0])}/shares`, {
      token: owner.token,
      body: { userId: viewer.id, access: 'view' },
    })
    expect(share.status, share.text).toBe(201)
    expect((await bulk(name, owner.token, { ids }, '?permanent=true')).body).toEqual({ deleted: 1 })
    const rows = await server.app.registry.system.db
      .selectFrom('record_shares')
      .select('id')
      .where('record_id', '=', ids[0]!)
      .execute()
    expect(rows).toEqual([])
  })

  it('respects row rules too', async () => {
    const name = await createCollection(server, owner.token, freshName('bulk'), [
      { name: 'title', type: 'text', required: true },
    ])
    const own = await notesWith(['mine'], mine.token, name)
    const theirs = await notesWith(['theirs'], owner.token, name)
    expect((await bulk(name, mine.token, { ids: [...own.ids, ...theirs.ids] }, '?permanent=true')).body).toEqual({
      deleted: 1,
    })
    expect(await stored(name, own.ids[0]!)).toBeNull()
    expect(await stored(name, theirs.ids[0]!)).not.toBeNull()
  })
})
