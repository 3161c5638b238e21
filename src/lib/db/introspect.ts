import { sql } from 'kysely'
import type { DbHandle } from './handle.js'

export interface ColumnInfo {
  name: string
  /** The database's own spelling of the type (TEXT, bigint, jsonb…). */
  type: string
}

/** The columns a table has in the database right now (empty when the table does not exist). */
export async function describeTable(handle: DbHandle, table: string): Promise<ColumnInfo[]> {
  if (handle.kind === 'sqlite') {
    const result = await sql<{
      name: string
      type: string
    }>`select name, type from pragma_table_info(${table}) order by cid`.execute(handle.db)
    return result.rows.map((r) => ({ name: r.name, type: r.type }))
  }
  const result = await sql<{ name: string; type: string }>`
    select column_name as name, data_type as type from information_schema.columns
    where table_schema = ${handle.schema ?? 'public'} and table_name = ${table}
    order by ordinal_position`.execute(handle.db)
  return result.rows
}
