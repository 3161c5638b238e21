import { sql } from 'kysely'
import type { TestServer } from '../support/harness.js'

/** The indexes of a collection's table in the project database, by name: their SQL as the database keeps it. */
export async function indexDefinitions(server: TestServer, table: string): Promise<Map<string, string>> {
  const handle = await server.app.registry.get(server.app.defaultProject.id)
  if (handle.kind === 'sqlite') {
    const result = await sql<{ name: string; sql: string | null }>`
      select name, sql from sqlite_master where type = 'index' and tbl_name = ${table}`.execute(handle.db)
    return new Map(result.rows.filter((r) => r.sql !== null).map((r) => [r.name, r.sql!]))
  }
  const result = await sql<{ name: string; sql: string }>`
    select indexname as name, indexdef as sql from pg_indexes where schemaname = ${handle.schema} and tablename = ${table}`.execute(
    handle.db,
  )
  return new Map(result.rows.map((r) => [r.name, r.sql]))
}

/** Whether an index definition is partial over live rows (`WHERE deleted_at IS NULL`, however the database spells it). */
export function isLiveRowIndex(definition: string): boolean {
  return /\bwhere\s+\(?\s*"?deleted_at"?\s+is\s+null\s*\)?\s*$/i.test(definition)
}
