import { sql } from 'kysely'
import { tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import type { CompoundIndex } from './definition/index.js'
import { indexColumn } from './definition/index.js'
import {
  createCompoundIndex,
  createFieldIndex,
  dropCompoundIndex,
  dropFieldIndex,
  dropUniqueIndex,
  fieldKey,
  indexName,
} from './ddl-indexes.js'
import { fieldTypeOf, type FieldDef } from './field-types/index.js'
import { rebuildTable, withColumnType, withoutNotNull } from './rebuild-table.js'
import type { TableLayout } from './table-layout.js'

/**
 * The DDL of a change to an existing field (changes/): its column's type, its NOT NULL, its unique index.
 * Every function runs on a transaction's handle, in the transaction that changes the table.
 */

/** What the table is: its name, layout, and the fields and compound indexes it has after the change. */
export interface TableShape {
  readonly table: string
  readonly layout: TableLayout
  readonly fields: readonly FieldDef[]
  readonly indexes: readonly CompoundIndex[]
}

/**
 * Holds off other writers until the transaction ends (PostgreSQL; a SQLite write transaction already
 * does), so the rows a change checks are the rows it converts: a record written between the check and an
 * ALTER … USING would be converted unchecked.
 */
export async function lockTableWrites(handle: DbHandle, table: string): Promise<void> {
  if (handle.kind === 'postgres')
    await sql`lock table ${tableIdentifier(handle, table)} in share row exclusive mode`.execute(handle.db)
}

/** Lets the field's column hold NULL (PostgreSQL in place, SQLite by a rebuild); a document has no column. */
export async function makeColumnNullable(handle: DbHandle, shape: TableShape, column: string): Promise<void> {
  if (shape.layout !== 'columns') return
  if (handle.kind === 'sqlite') return rebuildTable(handle, shape.table, withoutNotNull(column))
  await sql`alter table ${tableIdentifier(handle, shape.table)} alter column ${sql.id(column)} drop not null`.execute(
    handle.db,
  )
}

/**
 * Gives the field's column the type `after` declares, its values converted (checked beforehand by the
 * change: nothing here refuses). PostgreSQL: ALTER COLUMN … TYPE … USING a cast, which rebuilds the indexes
 * on the column. SQLite: a rebuild with the new declared type (the copy stores each value with the new
 * affinity: a REAL 3.0 becomes the INTEGER 3). A `kv` document keeps the JSON number either way, but on
 * PostgreSQL its indexes are on the field's expression, a cast to the column type, so each index naming the
 * field is made again with the new expression. Does nothing when the type is the same.
 */
export async function changeColumnType(
  handle: DbHandle,
  shape: TableShape,
  before: FieldDef,
  after: FieldDef,
): Promise<void> {
  const from = fieldTypeOf(before.type).column(before, handle.kind)
  const to = fieldTypeOf(after.type).column(after, handle.kind)
  if (from === null || to === null || from === to) return
  if (shape.layout === 'document') {
    if (handle.kind === 'postgres') await remakeFieldIndexes(handle, shape, before, after)
    return
  }
  if (handle.kind === 'sqlite') return rebuildTable(handle, shape.table, withColumnType(after.name, to))
  const column = sql.id(after.name)
  await sql`alter table ${tableIdentifier(handle, shape.table)} alter column ${column} type ${sql.raw(to)} using cast(${column} as ${sql.raw(to)})`.execute(
    handle.db,
  )
}

// The field's own index (when it stays indexed: a toggle made it already), its unique index (when it
// stays unique: turning it on or off is the unique change's) and each compound index naming it.
async function remakeFieldIndexes(handle: DbHandle, shape: TableShape, before: FieldDef, after: FieldDef) {
  const { table, layout } = shape
  if (before.indexed && after.indexed) {
    await dropFieldIndex(handle.db, handle, table, after.name, layout)
    await createFieldIndex(handle.db, handle, table, after, layout)
  }
  if (before.unique && after.unique) {
    await dropUniqueIndex(handle.db, handle, table, after.name)
    await createUniqueIndex(handle, shape, after)
  }
  for (const index of shape.indexes) {
    if (!index.fields.some((spec) => indexColumn(spec).field === after.name)) continue
    await dropCompoundIndex(handle.db, handle, index.name, layout)
    await createCompoundIndex(handle.db, handle, table, index, shape.fields, layout)
  }
}

/** Makes the field's unique index (the rows were checked for duplicates first); kept if it exists. */
export async function createUniqueIndex(handle: DbHandle, shape: TableShape, def: FieldDef): Promise<void> {
  const key = fieldKey(handle, def.name, [def], shape.layout)
  await sql`create unique index if not exists ${sql.id(indexName(shape.table, def.name, true))} on ${tableIdentifier(handle, shape.table)} (${key})`.execute(
    handle.db,
  )
}
