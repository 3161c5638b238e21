import { sql, type Kysely } from 'kysely'
import { tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { columnType, createIndexes, dropFieldIndex, dropUniqueIndex } from './ddl-indexes.js'
import { documentColumn } from './document-table.js'
import type { FieldDef } from './field-types/index.js'
import type { TableLayout } from './table-layout.js'

/**
 * Renaming and dropping a field's storage, inside the caller's transaction. The field's own indexes are
 * dropped first and (for a rename) made again under the new name: index names are derived from field
 * names, and a document table's indexes are expressions over the key. SQLite (3.35+) and PostgreSQL both
 * rename and drop columns in place; the caller has dropped the search index and the compound indexes that
 * name the field beforehand (SQLite refuses to drop a column an index or trigger uses).
 */

export async function renameFieldStorage(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  from: FieldDef,
  to: FieldDef,
  layout: TableLayout,
): Promise<void> {
  if (columnType(from, handle) === null) return
  await dropFieldIndex(db, handle, table, from.name, layout)
  await dropUniqueIndex(db, handle, table, from.name)
  const on = tableIdentifier(handle, table)
  if (layout === 'columns') {
    await sql`alter table ${on} rename column ${sql.id(from.name)} to ${sql.id(to.name)}`.execute(db)
  } else if (handle.kind === 'sqlite') {
    // `->` gives the value's JSON text, `json()` keeps it JSON: strings, numbers, objects and null move alike.
    const [a, b] = [sql.lit(`$.${from.name}`), sql.lit(`$.${to.name}`)]
    await sql`update ${on} set ${sql.id(documentColumn)} = json_set(json_remove(doc, ${a}), ${b}, json(doc -> ${a}))
      where json_type(doc, ${a}) is not null`.execute(db)
  } else {
    await sql`update ${on} set ${sql.id(documentColumn)} = (doc - ${sql.lit(from.name)}) || jsonb_build_object(${sql.lit(to.name)}, doc -> ${sql.lit(from.name)})
      where jsonb_exists(doc, ${sql.lit(from.name)})`.execute(db)
  }
  await createIndexes(db, table, [to], handle, layout)
}

export async function dropFieldStorage(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  def: FieldDef,
  layout: TableLayout,
): Promise<void> {
  if (columnType(def, handle) === null) return
  await dropFieldIndex(db, handle, table, def.name, layout)
  await dropUniqueIndex(db, handle, table, def.name)
  const on = tableIdentifier(handle, table)
  if (layout === 'columns') await sql`alter table ${on} drop column ${sql.id(def.name)}`.execute(db)
  else if (handle.kind === 'sqlite')
    await sql`update ${on} set doc = json_remove(doc, ${sql.lit(`$.${def.name}`)}) where json_type(doc, ${sql.lit(`$.${def.name}`)}) is not null`.execute(
      db,
    )
  else
    await sql`update ${on} set doc = doc - ${sql.lit(def.name)} where jsonb_exists(doc, ${sql.lit(def.name)})`.execute(
      db,
    )
}
