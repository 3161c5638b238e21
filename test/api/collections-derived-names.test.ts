import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tableIdentifier } from '../../src/lib/db/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, field, listedNames, uniqueName } from './collections-support.js'

/**
 * The objects Plinth derives from a collection's name (`<name>__search` and its triggers, `<name>__<field>__idx`,
 * `<name>__created_at__idx`, `<name>__pkey`, `<name>__search__gin`) never belong to another collection:
 * collection names may not contain `__` (docs/collections.md § Names), and the search index is dropped
 * only when it provably is one, so a table made before that rule keeps its data.
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

const post = (body: unknown) => server.request('POST', '/api/v1/collections', { token: owner.token, body })
const patch = (name: string, body: unknown) =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token: owner.token, body })
const del = (name: string) => server.request('DELETE', `/api/v1/collections/${name}`, { token: owner.token })
const projectHandle = () => server.app.registry.get(server.app.defaultProject.id)

describe('collections named like another collection’s derived objects', () => {
  // Each of these used to be 201, and each pair then destroyed data or failed with 500 ddl_error.
  it.each([
    ['qx', 'qx__search', 'PATCHing qx to add a text field (or deleting qx) dropped qx__search’s table'],
    ['zz', 'zz__search', 'zz with a text field was a 500 ddl_error'],
    ['ef', 'ef__g', 'ef with an indexed field g__h collided with ef__g’s index on h'],
  ])('%s beside %s is impossible: 400 reserved_name (%s)', async (base, doubled) => {
    const suffix = uniqueName('').replace(/[^a-z0-9]/g, '')
    const first = `${base}${suffix}`
    const second = doubled.replace(base, first)
    await createCollection(server, owner.token, { name: first, fields: [field('n', 'integer')] })
    const reply = await post({ name: second, fields: [field('title', 'text'), field('h', 'text', { indexed: true })] })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({ error: 'reserved_name', details: { name: second } })
    expect(await listedNames(server, owner.token)).not.toContain(second)
    // The first collection takes what would have collided.
    const grown = await patch(first, {
      fields: [field('n', 'integer'), field('title', 'text'), field('g__h', 'text', { indexed: true })],
    })
    expect(grown.status, grown.text).toBe(200)
    await createRecord(server, owner.token, first, { title: 'findable', g__h: 'x' })
    const found = await server.request('GET', `/api/v1/collections/${first}/records?search=findable`, {
      token: owner.token,
    })
    expect(found.body.total).toBe(1)
    expect((await del(first)).status).toBe(200)
  })

  it('sqlite is reserved_name, not a 500 ddl_error (sqlite__created_at__idx begins with sqlite_)', async () => {
    const reply = await post({ name: 'sqlite', fields: [] })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({ error: 'reserved_name', details: { name: 'sqlite' } })
  })

  // PostgreSQL names a primary key `<table>_pkey` unless told otherwise, an index name a collection may take.
  it('a collection named like another’s primary key index (a_pkey beside a) is created', async () => {
    const base = uniqueName('pk')
    await createCollection(server, owner.token, { name: base, fields: [field('title', 'text')] })
    const created = await createCollection(server, owner.token, {
      name: `${base}_pkey`,
      fields: [field('title', 'text', { unique: true })],
    })
    expect(created.name).toBe(`${base}_pkey`)
    await createRecord(server, owner.token, base, { title: 'one' })
    await createRecord(server, owner.token, `${base}_pkey`, { title: 'one' })
  })
})

// A table named like a collection's search objects, as a collection named `qx__search` (allowed before the
// rule) had: made here behind the API's back. PATCH and DELETE of `qx` must never drop or replace it.
describe('a legacy table named like a collection’s search index', () => {
  const squatterOf = (name: string) =>
    server.app.registry.kind === 'sqlite' ? `${name}__search` : `${name}__search__gin`

  async function squat(table: string): Promise<void> {
    const handle = await projectHandle()
    await sql`create table ${tableIdentifier(handle, table)} (id text primary key, note text)`.execute(handle.db)
    await sql`insert into ${tableIdentifier(handle, table)} (id, note) values ('1', 'precious')`.execute(handle.db)
  }
  async function rowsOf(table: string): Promise<unknown[]> {
    const handle = await projectHandle()
    return (await sql`select id, note from ${tableIdentifier(handle, table)}`.execute(handle.db)).rows
  }

  it('PATCH adding a text field is refused (500 ddl_error, nothing changed) and the table keeps its rows', async () => {
    const name = uniqueName('qx')
    const created = await createCollection(server, owner.token, { name, fields: [field('n', 'integer')] })
    await squat(squatterOf(name))
    const reply = await patch(name, { fields: [...created.fields, field('title', 'text')] })
    expect(reply.status, reply.text).toBe(500)
    expect(reply.body.error).toBe('ddl_error')
    expect(await rowsOf(squatterOf(name))).toEqual([{ id: '1', note: 'precious' }])
    expect(
      (await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })).body.data,
    ).toMatchObject({ schemaVersion: 1, fields: created.fields })
  })

  it('DELETE drops the collection and leaves the table and its rows alone', async () => {
    const name = uniqueName('qx')
    await createCollection(server, owner.token, { name, fields: [field('n', 'integer')] })
    await squat(squatterOf(name))
    const reply = await del(name)
    expect(reply.status, reply.text).toBe(200)
    expect(await listedNames(server, owner.token)).not.toContain(name)
    expect(await rowsOf(squatterOf(name))).toEqual([{ id: '1', note: 'precious' }])
  })

  it('the collection’s own search index still goes with PATCH and DELETE', async () => {
    const name = uniqueName('own')
    const created = await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    await createRecord(server, owner.token, name, { title: 'aardvark' })
    const grown = await patch(name, { fields: [...created.fields, field('summary', 'text')] })
    expect(grown.status, grown.text).toBe(200)
    await createRecord(server, owner.token, name, { title: 'badger', summary: 'zebra' })
    for (const word of ['aardvark', 'zebra']) {
      expect(
        (await server.request('GET', `/api/v1/collections/${name}/records?search=${word}`, { token: owner.token })).body
          .total,
        word,
      ).toBe(1)
    }
    expect((await del(name)).status).toBe(200)
    // Nothing of it is left: the same name is created afresh, search index and all.
    await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    await createRecord(server, owner.token, name, { title: 'capybara' })
    expect(
      (await server.request('GET', `/api/v1/collections/${name}/records?search=aardvark`, { token: owner.token })).body
        .total,
    ).toBe(0)
    expect(
      (await server.request('GET', `/api/v1/collections/${name}/records?search=capybara`, { token: owner.token })).body
        .total,
    ).toBe(1)
  })
})
