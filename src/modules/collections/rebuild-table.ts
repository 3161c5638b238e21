import { sql } from 'kysely'
import type { DbHandle } from '../../lib/db/index.js'

/**
 * How a SQLite table's own CREATE statement changes in a rebuild: the text after the table's name (the
 * parenthesised column list) in, the new one out; null when it needs no change.
 */
export type CreateTransform = (body: string) => string | null

// Field names are checked (`[a-z][a-z0-9_]*`) and ddl.ts writes every column `"name" TYPE …` after `(` or `, `.
const columnStart = (column: string) => `([(,]\\s*"${column}" )`

/** Takes `not null` off a column's definition. */
export function withoutNotNull(column: string): CreateTransform {
  const pattern = new RegExp(`${columnStart(column)}([^,]*?) not null`, 'i')
  return (body) => (pattern.test(body) ? body.replace(pattern, '$1$2') : null)
}

/** Declares a column with another type (SQLite's affinity; a rebuild converts values as the copy stores them). */
export function withColumnType(column: string, type: string): CreateTransform {
  const pattern = new RegExp(`${columnStart(column)}([A-Za-z]+)\\b`)
  return (body) => {
    const match = pattern.exec(body)
    if (!match || match[2]?.toUpperCase() === type.toUpperCase()) return null
    return body.replace(pattern, `$1${type}`)
  }
}

/**
 * Rebuilds a SQLite table whose column definitions must change in a way ALTER TABLE cannot make (sqlite.org
 * "Making other kinds of table schema changes"): a new table from the table's own CREATE statement as
 * `transform` changes it, every row copied with its rowid (which the search index's external content
 * refers to) and converted to the new columns' affinity as SQLite stores it, the old table dropped, the new
 * one renamed, and its indexes (field, unique, live-row, compound) and triggers (the search index's) made
 * again from their stored statements. Run it inside a transaction: a failure, or a kill, leaves the old
 * table whole. Does nothing when `transform` has nothing to change. SQLite only.
 */
export async function rebuildTable(handle: DbHandle, table: string, transform: CreateTransform): Promise<void> {
  const master = await sql<{ type: string; name: string; sql: string | null }>`
    select type, name, sql from sqlite_master where tbl_name = ${table} and type in ('table', 'index', 'trigger')`.execute(
    handle.db,
  )
  const create = master.rows.find((r) => r.type === 'table' && r.name === table)?.sql
  if (!create) return
  const body = transform(create.slice(create.indexOf('(')))
  if (body === null) return
  const temporary = `${table}__rebuild`
  const columns = (
    await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(handle.db)
  ).rows.map((r) => sql.id(r.name))
  await sql`create table ${sql.id(temporary)} ${sql.raw(body)}`.execute(handle.db)
  const list = sql.join([sql`rowid`, ...columns])
  await sql`insert into ${sql.id(temporary)} (${list}) select ${list} from ${sql.id(table)}`.execute(handle.db)
  await sql`drop table ${sql.id(table)}`.execute(handle.db)
  await sql`alter table ${sql.id(temporary)} rename to ${sql.id(table)}`.execute(handle.db)
  for (const row of master.rows) {
    if (row.type !== 'table' && row.sql) await sql.raw(row.sql).execute(handle.db)
  }
}
