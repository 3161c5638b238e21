import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { orderedIndexColumn, tableIdentifier } from '../../src/lib/db/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, field, uniqueName } from './collections-support.js'
import { indexDefinitions, isLiveRowIndex } from './collections-indexes-support.js'

/**
 * Collections made before live-row indexes (index layout 1, decision 024) get them when Plinth starts:
 * their created-at index and their `indexed` fields' indexes are rebuilt as partial indexes over live rows,
 * unique ones are left whole, the registry records layout 2. Running it again changes nothing; a collection
 * whose rebuild fails does not stop the start and is tried again at the next one.
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

const rebuilt = 'collection indexes rebuilt for live rows'
const failed = 'rebuilding collection indexes failed'
const logsWith = (needle: string) => server.logs.filter((line) => line.includes(needle))

async function layoutOf(name: string): Promise<number> {
  const row = await server.app.registry.system.db
    .selectFrom('collections')
    .select('index_layout')
    .where('project_id', '=', server.app.defaultProject.id)
    .where('name', '=', name)
    .executeTakeFirstOrThrow()
  return Number(row.index_layout)
}

async function setLayout(name: string, layout: number): Promise<void> {
  await server.app.registry.system.db
    .updateTable('collections')
    .set({ index_layout: layout })
    .where('project_id', '=', server.app.defaultProject.id)
    .where('name', '=', name)
    .execute()
}

/** Makes a collection's indexes what Plinth built before decision 024: whole indexes, the field's without `id`. */
async function makeOldIndexes(name: string): Promise<void> {
  const handle = await server.app.registry.get(server.app.defaultProject.id)
  const table = tableIdentifier(handle, name)
  for (const index of [`${name}__created_at__idx`, `${name}__status__idx`])
    await sql`drop index ${tableIdentifier(handle, index)}`.execute(handle.db)
  await sql`create index ${sql.id(`${name}__created_at__idx`)} on ${table} (${orderedIndexColumn(handle, 'created_at', false)}, id)`.execute(
    handle.db,
  )
  await sql`create index ${sql.id(`${name}__status__idx`)} on ${table} (${orderedIndexColumn(handle, 'status', true)})`.execute(
    handle.db,
  )
  await setLayout(name, 1)
}

describe('rebuilding the indexes of existing collections at start', () => {
  it('turns layout-1 indexes into live-row indexes, once, leaving unique ones and the data as they were', async () => {
    const name = uniqueName('legacy')
    await createCollection(server, owner.token, {
      name,
      fields: [
        field('status', 'enum', { enumValues: ['a', 'b'], indexed: true }),
        field('code', 'text', { unique: true }),
      ],
    })
    const kept = await createRecord(server, owner.token, name, { status: 'a', code: 'K' })
    const gone = await createRecord(server, owner.token, name, { status: 'a', code: 'G' })
    expect(
      (await server.request('DELETE', `/api/v1/collections/${name}/records/${gone.id}`, { token: owner.token })).status,
    ).toBe(200)
    await makeOldIndexes(name)
    const old = await indexDefinitions(server, name)
    expect(isLiveRowIndex(old.get(`${name}__created_at__idx`)!)).toBe(false)
    expect(isLiveRowIndex(old.get(`${name}__status__idx`)!)).toBe(false)

    server = await server.restart()
    expect(logsWith(rebuilt).filter((line) => line.includes(name))).toHaveLength(1)
    expect(await layoutOf(name)).toBe(2)
    const now = await indexDefinitions(server, name)
    expect(isLiveRowIndex(now.get(`${name}__created_at__idx`)!)).toBe(true)
    expect(isLiveRowIndex(now.get(`${name}__status__idx`)!)).toBe(true)
    expect(now.get(`${name}__code__uq`)).toBe(old.get(`${name}__code__uq`))
    expect(now.size).toBe(old.size)

    // The data and its answers are as before: the live list, the soft-deleted row on request, uniqueness across both.
    const filter = encodeURIComponent(JSON.stringify({ status: { _eq: 'a' } }))
    const list = await server.request('GET', `/api/v1/collections/${name}/records?filter=${filter}`, {
      token: owner.token,
    })
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([kept.id])
    const all = await server.request(
      'GET',
      `/api/v1/collections/${name}/records?filter=${filter}&include_deleted=true`,
      { token: owner.token },
    )
    expect(all.body.total).toBe(2)
    const taken = await server.request('POST', `/api/v1/collections/${name}/records`, {
      token: owner.token,
      body: { code: 'G' },
    })
    expect(taken.status, taken.text).toBe(409)

    // Again: nothing left to do.
    server = await server.restart()
    expect(logsWith(rebuilt).filter((line) => line.includes(name))).toHaveLength(0)
    expect(await indexDefinitions(server, name)).toEqual(now)

    // And forced again over indexes already rebuilt (a crash before the layout was recorded): the same indexes.
    await setLayout(name, 1)
    server = await server.restart()
    expect(logsWith(rebuilt).filter((line) => line.includes(name))).toHaveLength(1)
    expect(await indexDefinitions(server, name)).toEqual(now)
    expect(await layoutOf(name)).toBe(2)
  })

  it('a collection whose rebuild fails is logged and left for the next start; the start goes on', async () => {
    const broken = uniqueName('broken')
    const fine = uniqueName('fine')
    await createCollection(server, owner.token, { name: broken, fields: [field('status', 'text', { indexed: true })] })
    await createCollection(server, owner.token, { name: fine, fields: [field('status', 'text', { indexed: true })] })
    await makeOldIndexes(fine)
    // Its table is gone (as when a registered database lost it): every index statement on it fails.
    const handle = await server.app.registry.get(server.app.defaultProject.id)
    await sql`drop table ${tableIdentifier(handle, broken)}`.execute(handle.db)
    await setLayout(broken, 1)

    server = await server.restart()
    expect(logsWith(failed).filter((line) => line.includes(broken))).toHaveLength(1)
    expect(await layoutOf(broken)).toBe(1)
    expect(await layoutOf(fine)).toBe(2)
    expect(isLiveRowIndex((await indexDefinitions(server, fine)).get(`${fine}__status__idx`)!)).toBe(true)
    expect((await server.request('GET', '/health')).status).toBe(200)
  })
})
