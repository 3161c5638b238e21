import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll, recordsPath } from './records-fixtures.js'

// POST /api/v1/collections/:name/truncate (core-api § Collection schema endpoints): every record goes,
// soft-deleted ones included, with the search index; the schema and the grants stay.

let server: TestServer
let owner: Account
let admin: Account
let editor: Account

const truncate = (name: string, token?: string): Promise<Reply> =>
  server.request('POST', `/api/v1/collections/${name}/truncate`, { token })
const fields = [
  { name: 'title', type: 'text', required: true },
  { name: 'body', type: 'richtext', required: false },
]

let seq = 0
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `truncate_role_${seq++}`
  const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name } })
  expect(role.status, role.text).toBe(201)
  const put = await server.request('PUT', `/api/v1/roles/${role.body.data.id}/grants`, {
    token: owner.token,
    body: { grants },
  })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

/** A collection with two active records and one soft-deleted. */
async function filled(extra: Record<string, unknown> = {}): Promise<string> {
  const name = await createCollection(server, owner.token, freshName('trunc'), fields, extra)
  await createRecord(server, owner.token, name, { title: 'alpha one', body: 'zebra' })
  await createRecord(server, owner.token, name, { title: 'alpha two' })
  const gone = await createRecord(server, owner.token, name, { title: 'alpha three' })
  expect((await server.request('DELETE', recordsPath(name, gone.id), { token: owner.token })).status).toBe(200)
  return name
}

const everything = (name: string) => listAll(server, owner.token, name, { include_deleted: 'true' })
const search = async (name: string, words: string) =>
  (await listAll(server, owner.token, name, { search: words })).map((r) => r.title)

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  editor = await createAccount(server, owner.token, { role: 'editor' })
})
afterAll(async () => {
  await server?.stop()
})

describe('truncate', () => {
  it('deletes every record, soft-deleted ones included, and answers how many', async () => {
    const name = await filled()
    expect(await everything(name)).toHaveLength(3)
    const reply = await truncate(name, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, deleted: 3, staleSearchIndexes: [] })
    expect(await everything(name)).toEqual([])
    expect((await truncate(name, owner.token)).body).toEqual({ success: true, deleted: 0, staleSearchIndexes: [] })
  })

  it('keeps the schema: the collection is unchanged and takes new records', async () => {
    const name = await filled()
    const before = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
    expect((await truncate(name, owner.token)).status).toBe(200)
    const after = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
    expect(after.status).toBe(200)
    expect(after.body.data).toEqual(before.body.data)
    const made = await createRecord(server, owner.token, name, { title: 'fresh' })
    expect((await listAll(server, owner.token, name)).map((r) => r.id)).toEqual([made.id])
  })

  it('empties the search index too: old words find nothing, even in rows that reuse old row slots', async () => {
    const name = await filled()
    expect(await search(name, 'alpha')).toHaveLength(2)
    expect((await truncate(name, owner.token)).status).toBe(200)
    expect(await search(name, 'alpha')).toEqual([])
    expect(await search(name, 'zebra')).toEqual([])
    // SQLite hands a new row the first free rowid; a stale index entry for it would match old words.
    await createRecord(server, owner.token, name, { title: 'beta' })
    await createRecord(server, owner.token, name, { title: 'gamma' })
    expect(await search(name, 'alpha')).toEqual([])
    expect(await search(name, 'zebra')).toEqual([])
    expect(await search(name, 'beta')).toEqual(['beta'])
    // The collection's own database: the project's, or its own under TEST_STORAGE_TYPE (durable_object, r2_sql: the copy it reads).
    const handle = await server.app.services.collections.handleOf(
      await server.app.services.collections.get(server.app.defaultProject.id, name),
    )
    if (handle.kind === 'sqlite') {
      const rows = await sql<{ n: number }>`select count(*) as n from ${sql.id(`${name}__search`)}`.execute(handle.db)
      expect(Number(rows.rows[0]!.n)).toBe(2)
    }
  })

  it('keeps the grants on the collection; removes the shares of the records it deleted', async () => {
    const name = await filled({ accessControl: { preset: 'private', sharing: true } })
    const reader = await personWith([{ resource: `collections/${name}`, action: 'read' }])
    const [first] = await listAll(server, owner.token, name)
    const share = await server.request('POST', `${recordsPath(name, first!.id)}/shares`, {
      token: owner.token,
      body: { userId: reader.id, access: 'view' },
    })
    expect(share.status, share.text).toBe(201)
    expect((await truncate(name, owner.token)).status).toBe(200)

    const collection = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
    const shares = await server.app.registry.system.db
      .selectFrom('record_shares')
      .select('id')
      .where('collection_id', '=', collection.body.data.id)
      .execute()
    expect(shares).toEqual([])
    // The reader's grant survived: a record made now is theirs to read once shared again.
    const roles = await server.request('GET', '/api/v1/roles', { token: owner.token })
    const role = roles.body.data.find((r: any) => r.name === reader.role)
    const grants = await server.request('GET', `/api/v1/roles/${role.id}/grants`, { token: owner.token })
    expect(grants.body.data).toEqual([expect.objectContaining({ resource: `collections/${name}`, action: 'read' })])
  })

  it('writes collection.truncated to the audit log', async () => {
    const name = await filled()
    expect((await truncate(name, admin.token)).status).toBe(200)
    const audit = await server.request('GET', '/api/v1/audit-log?action=collection.truncated&limit=100', {
      token: owner.token,
    })
    expect(audit.status, audit.text).toBe(200)
    expect(audit.body.data.find((e: any) => e.details.name === name)).toMatchObject({
      actor: { id: admin.id },
      details: { name, deleted: 3 },
    })
  })
})

describe('who may truncate', () => {
  it('admin access, a hard_delete grant or manage on the collection', async () => {
    for (const make of [
      async () => admin,
      async (name: string) => personWith([{ resource: `collections/${name}`, action: 'hard_delete' }]),
      async (name: string) => personWith([{ resource: `collections/${name}`, action: 'manage' }]),
    ]) {
      const name = await filled()
      const who = await make(name)
      const reply = await truncate(name, who.token)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.deleted).toBe(3)
    }
  })

  it('delete and write do not imply hard_delete: 403 naming it, nothing deleted', async () => {
    const name = await filled()
    for (const who of [
      editor,
      await personWith([
        { resource: `collections/${name}`, action: 'write' },
        { resource: `collections/${name}`, action: 'purge_deleted' },
      ]),
    ]) {
      const reply = await truncate(name, who.token)
      expectError(reply, 403, 'forbidden')
      expect(reply.body.message).toContain(`collections/${name}:hard_delete`)
    }
    expectError(await truncate(name), 401, 'unauthorized')
    expect(await everything(name)).toHaveLength(3)
  })

  it('a hard_delete grant limited by item_filter, or a private collection without admin access, is refused', async () => {
    const limited = await filled()
    const who = await personWith([
      {
        resource: `collections/${limited}`,
        action: 'hard_delete',
        item_filter: { created_by: { _eq: '$CURRENT_USER' } },
      },
    ])
    const reply = await truncate(limited, who.token)
    expectError(reply, 403, 'forbidden')
    expect(reply.body.message).toMatch(/without a row restriction/)
    expect(await everything(limited)).toHaveLength(3)

    const priv = await filled({ accessControl: { preset: 'private' } })
    const member = await personWith([{ resource: `collections/${priv}`, action: 'hard_delete' }])
    expectError(await truncate(priv, member.token), 403, 'forbidden')
    expect(await everything(priv)).toHaveLength(3)
  })

  it('an unknown collection is 404 collection_not_found', async () => {
    expectError(await truncate('no_such_collection', owner.token), 404, 'collection_not_found')
  })
})

describe('references from other collections', () => {
  it('records of another collection still pointing here: 409 conflict naming the field, nothing deleted', async () => {
    const target = await filled()
    const holder = await createCollection(server, owner.token, freshName('holder'), [
      { name: 'title', type: 'text', required: true },
      {
        name: 'one',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: target, relationType: 'belongsTo', onDelete: 'set-null' },
      },
      {
        name: 'many',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: target, relationType: 'hasMany', onDelete: 'set-null' },
      },
    ])
    // Empty references hold nothing.
    await createRecord(server, owner.token, holder, { title: 'none' })
    await createRecord(server, owner.token, holder, { title: 'empty list', many: [] })
    expect((await truncate(target, owner.token)).body.deleted).toBe(3)

    const refill = await createRecord(server, owner.token, target, { title: 'again' })
    const pointing = await createRecord(server, owner.token, holder, { title: 'points', many: [refill.id] })
    const reply = await truncate(target, owner.token)
    expectError(reply, 409, 'conflict')
    expect(reply.body.message).toContain(`${holder}.many`)
    expect(reply.body.details.referencing).toEqual([`${holder}.many`])
    expect(await everything(target)).toHaveLength(1)

    // A soft-deleted holder still points: it could be restored.
    expect((await server.request('DELETE', recordsPath(holder, pointing.id), { token: owner.token })).status).toBe(200)
    expectError(await truncate(target, owner.token), 409, 'conflict')
    expect(
      (await server.request('DELETE', recordsPath(holder, pointing.id, { permanent: true }), { token: owner.token }))
        .status,
    ).toBe(200)
    await createRecord(server, owner.token, holder, { title: 'belongs', one: refill.id })
    expect((await truncate(target, owner.token)).body.details.referencing).toEqual([`${holder}.one`])
  })

  it('a relation of the collection to itself does not block', async () => {
    const name = await createCollection(server, owner.token, freshName('tree'), [
      { name: 'title', type: 'text', required: true },
    ])
    const patch = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: {
        fields: [
          { name: 'title', type: 'text', required: true },
          {
            name: 'parent',
            type: 'relation',
            required: false,
            relationConfig: { targetCollection: name, relationType: 'belongsTo', onDelete: 'set-null' },
          },
        ],
      },
    })
    expect(patch.status, patch.text).toBe(200)
    const root = await createRecord(server, owner.token, name, { title: 'root' })
    await createRecord(server, owner.token, name, { title: 'leaf', parent: root.id })
    expect((await truncate(name, owner.token)).body).toEqual({ success: true, deleted: 2, staleSearchIndexes: [] })
  })
})
