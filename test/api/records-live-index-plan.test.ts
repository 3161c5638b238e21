import { sql, type RawBuilder } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tableIdentifier, type DbHandle } from '../../src/lib/db/index.js'
import { keysetOrder } from '../../src/lib/filter/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createCollection, field, uniqueName } from './collections-support.js'

/**
 * The filtered, sorted list of live rows is answered from an index (decision 024): the database's own
 * plan for the statements records/list.ts builds (`deleted_at is null`, the filter, ORDER BY value then id
 * with nulls smallest, LIMIT) walks the collection's compound live-row index in order, with no sort step,
 * and counts from it. SQLite: EXPLAIN QUERY PLAN. PostgreSQL: EXPLAIN with `enable_seqscan = off` in the
 * transaction, since with a few thousand rows its cost model may rightly prefer reading the whole table;
 * the test is that the index serves the query at all, in order.
 */

let server: TestServer
let owner: Account
let handle: DbHandle
const name = uniqueName('plan')
let indexName: string

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const created = await createCollection(server, owner.token, {
    name,
    fields: [
      field('title', 'text'),
      field('status', 'enum', { enumValues: ['draft', 'published', 'archived'] }),
      field('views', 'integer'),
    ],
    indexes: [{ fields: ['status', '-views'] }],
  })
  indexName = created.indexes[0].name
  handle = await server.app.registry.get(server.app.defaultProject.id)
  // 2,000 rows in two 1,000-row imports: the second refreshes the planner's statistics (import.ts).
  for (let chunk = 0; chunk < 2; chunk++) {
    const lines = Array.from({ length: 1000 }, (_, i) => {
      const n = chunk * 1000 + i
      return JSON.stringify({
        title: `t${n}`,
        status: ['draft', 'published', 'archived'][n % 3],
        views: (n * 7919) % 5000,
      })
    })
    const reply = await server.request('POST', `/api/v1/collections/${name}/records/import-ndjson`, {
      token: owner.token,
      rawBody: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.imported).toBe(1000)
  }
})
afterAll(async () => {
  await server?.stop()
})

// What records/list.ts asks for `?limit=25&sortBy=-views&filter={"status":{"_eq":"published"}}`, page mode.
const live = sql`deleted_at is null`
const filter = () => sql`${sql.ref('status')} = ${sql.lit('published')}`
const page = () =>
  sql`select * from ${tableIdentifier(handle, name)} where ${live} and ${filter()} order by ${keysetOrder(sql.ref('views'), 'desc')} limit 25`
const count = () => sql`select count(*) as n from ${tableIdentifier(handle, name)} where ${live} and ${filter()}`

async function plan(query: RawBuilder<unknown>): Promise<string> {
  if (handle.kind === 'sqlite') {
    const rows = await sql<{ detail: string }>`explain query plan ${query}`.execute(handle.db)
    return rows.rows.map((r) => r.detail).join('\n')
  }
  return handle.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx)
    const rows = await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx)
    return rows.rows.map((r) => r['QUERY PLAN']).join('\n')
  })
}

describe('the plan of a filtered, sorted list of live rows', () => {
  it('walks the compound live-row index in order: no table scan, no sort', async () => {
    const text = await plan(page())
    expect(text).toContain(indexName)
    if (handle.kind === 'sqlite') {
      expect(text).toMatch(new RegExp(`SEARCH .* USING INDEX ${indexName} \\(status=\\?\\)`))
      expect(text).not.toMatch(/TEMP B-TREE/)
      expect(text).not.toMatch(/\bSCAN\b/)
    } else {
      expect(text).toMatch(new RegExp(`Index Scan(?: Backward)? using ${indexName} on`))
      expect(text).not.toMatch(/\bSort\b/)
      expect(text).not.toMatch(/Seq Scan/)
    }
  })

  it('counts the page-mode total from the same index, without reading rows', async () => {
    const text = await plan(count())
    expect(text).toContain(indexName)
    if (handle.kind === 'sqlite') expect(text).toMatch(new RegExp(`USING COVERING INDEX ${indexName}`))
    else expect(text).toMatch(/Index Only Scan|Index Scan|Bitmap Index Scan/)
    expect(text).not.toMatch(/Seq Scan|\bSCAN\b/)
  })

  it('the list answers what the plan promises, soft-deleted rows included only when asked for', async () => {
    const filterParam = encodeURIComponent(JSON.stringify({ status: { _eq: 'published' } }))
    const first = await server.request(
      'GET',
      `/api/v1/collections/${name}/records?limit=25&sortBy=-views&filter=${filterParam}`,
      { token: owner.token },
    )
    expect(first.status, first.text).toBe(200)
    const views = first.body.data.map((r: { views: number }) => r.views)
    expect(views).toEqual([...views].sort((a: number, b: number) => b - a))
    expect(first.body.total).toBe(667)
    const top = first.body.data[0]
    expect(
      (await server.request('DELETE', `/api/v1/collections/${name}/records/${top.id}`, { token: owner.token })).status,
    ).toBe(200)
    const after = await server.request(
      'GET',
      `/api/v1/collections/${name}/records?limit=25&sortBy=-views&filter=${filterParam}`,
      { token: owner.token },
    )
    expect(after.body.total).toBe(666)
    expect(after.body.data[0].id).not.toBe(top.id)
    const all = await server.request(
      'GET',
      `/api/v1/collections/${name}/records?limit=25&sortBy=-views&filter=${filterParam}&include_deleted=true`,
      { token: owner.token },
    )
    expect(all.body.total).toBe(667)
    expect(all.body.data[0].id).toBe(top.id)
  })

  it('the statistics were refreshed after the import', async () => {
    if (handle.kind === 'sqlite') {
      const stats = await sql<{ tbl: string }>`select tbl from sqlite_stat1 where tbl = ${name}`.execute(handle.db)
      expect(stats.rows.length).toBeGreaterThan(0)
    } else {
      const stats = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_user_tables where schemaname = ${handle.schema} and relname = ${name} and last_analyze is not null`.execute(
        handle.db,
      )
      expect(stats.rows[0]!.n).toBe(1)
    }
  })
})
