import { sql } from 'kysely'
import { tableIdentifier, type DbHandle } from '../../lib/db/index.js'

/**
 * Lets a column hold NULL (a field that stops being required; it was made NOT NULL with its table).
 * PostgreSQL drops the constraint in place. SQLite cannot: the table is rebuilt (sqlite.org "Making other
 * kinds of table schema changes") from its own CREATE statement with that column's `not null` removed,
 * its rows copied with their rowids (which the search index's external content refers to), and its
 * indexes and triggers made again from their stored statements. Run it inside a transaction: a failure
 * leaves the old table whole.
 */
export async function makeColumnNullable(handle: DbHandle, table: string, column: string): Promise<void> {
  if (handle.kind === 'postgres') {
    await sql`alter table ${tableIdentifier(handle, table)} alter column ${sql.id(column)} drop not null`.execute(
      handle.db,
    )
    return
  }
  const master = await sql<{ type: string; name: string; sql: string | null }>`
    select type, name, sql from sqlite_master where tbl_name = ${table} and type in ('table', 'index', 'trigger')`.execute(
    handle.db,
  )
  const create = master.rows.find((r) => r.type === 'table' && r.name === table)?.sql
  // Field names are checked (`[a-z][a-z0-9_]*`) and every column is written `"name" TYPE …` by ddl.ts.
  const notNull = new RegExp(`("${column}" [^,]*?) not null`, 'i')
  if (!create || !notNull.test(create)) return
  const temporary = `${table}__nullable`
  const columns = (
    await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(handle.db)
  ).rows.map((r) => sql.id(r.name))
  const body = create.slice(create.indexOf('(')).replace(notNull, '$1')
  await sql`create table ${sql.id(temporary)} ${sql.raw(body)}`.execute(handle.db)
  const list = sql.join([sql`rowid`, ...columns])
  await sql`insert into ${sql.id(temporary)} (${list}) select ${list} from ${sql.id(table)}`.execute(handle.db)
  await sql`drop table ${sql.id(table)}`.execute(handle.db)
  await sql`alter table ${sql.id(temporary)} rename to ${sql.id(table)}`.execute(handle.db)
  for (const row of master.rows) {
    if (row.type !== 'table' && row.sql) await sql.raw(row.sql).execute(handle.db)
  }
}
