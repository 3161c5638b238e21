import { sql, type Kysely } from 'kysely'
import { tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { columnType, dropFieldIndex, dropUniqueIndex } from './ddl-indexes.js'
import { documentColumn } from './document-table.js'
import type { FieldDef } from './field-types/index.js'
import type { TableLayout } from './table-layout.js'

/**
 * Renaming and dropping a field's storage, inside the caller's transaction. The field's own indexes are
 * dropped first (the caller makes a renamed field's again under its new name: index names are derived from
 * field names, and a document table's indexes are expressions over the key). SQLite (3.35+) and PostgreSQL both
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
  /** The column already has its new name (a PATCH sent again after a crash before the registry was written). */
  done = false,
): Promise<void> {
  if (columnType(from, handle) === null) return
  await dropFieldIndex(db, handle, table, from.name, layout)
  await dropUniqueIndex(db, handle, table, from.name)
  if (!done) await moveField(db, handle, table, from.name, to.name, layout)
}

export async function dropFieldStorage(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  def: FieldDef,
  layout: TableLayout,
  /** The column is gone already (a PATCH sent again after a crash before the registry was written). */
  done = false,
): Promise<void> {
  if (columnType(def, handle) === null) return
  await dropFieldIndex(db, handle, table, def.name, layout)
  await dropUniqueIndex(db, handle, table, def.name)
  const on = tableIdentifier(handle, table)
  if (done) return
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

/** Gives a field's values their new name: the column renamed, or each document's key moved. */
async function moveField(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  from: string,
  to: string,
  layout: TableLayout,
): Promise<void> {
  const on = tableIdentifier(handle, table)
  if (layout === 'columns') {
    await sql`alter table ${on} rename column ${sql.id(from)} to ${sql.id(to)}`.execute(db)
  } else if (handle.kind === 'sqlite') {
    // `->` gives the value's JSON text, `json()` keeps it JSON: strings, numbers, objects and null move alike.
    const [a, b] = [sql.lit(`$.${from}`), sql.lit(`$.${to}`)]
    await sql`update ${on} set ${sql.id(documentColumn)} = json_set(json_remove(doc, ${a}), ${b}, json(doc -> ${a}))
      where json_type(doc, ${a}) is not null`.execute(db)
  } else {
    await sql`update ${on} set ${sql.id(documentColumn)} = (doc - ${sql.lit(from)}) || jsonb_build_object(${sql.lit(to)}, doc -> ${sql.lit(from)})
      where jsonb_exists(doc, ${sql.lit(from)})`.execute(db)
  }
}
