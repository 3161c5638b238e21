import { sql, type Kysely, type RawBuilder } from 'kysely'
import { orderedIndexColumn, tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { indexColumn, indexColumnIsText, type CompoundIndex } from './definition/index.js'
import { derivedName } from './derived-name.js'
import { fieldExpression } from './document-table.js'
import { fieldTypeOf, type FieldDef } from './field-types/index.js'
import type { TableLayout } from './table-layout.js'

/**
 * The indexes of a collection's table (see ddl.ts for the rules they follow: live-row indexes, whole
 * unique indexes, `id` as the tie-breaker). Names are derived from the table and field names.
 */

/** What an index names for a field (or a system column): its column, or its expression in the document. */
export function fieldKey(
  handle: DbHandle,
  name: string,
  fields: readonly FieldDef[],
  layout: TableLayout,
): RawBuilder<unknown> {
  const def = layout === 'document' ? fields.find((f) => f.name === name) : undefined
  return def ? sql`(${fieldExpression(handle.kind, def)})` : sql.id(name)
}

/** The column type of a stored field in this dialect (null for computed fields). */
export function columnType(def: FieldDef, handle: DbHandle): string | null {
  return fieldTypeOf(def.type).column(def, handle.kind)
}

// Before derivedName, a long name was used as it was (PostgreSQL cut it to 63 bytes itself); dropping
// an index also tries that name, so indexes made then can still be toggled off.
function legacyIndexName(table: string, field: string, unique: boolean): string {
  return `${table}__${field}__${unique ? 'uq' : 'idx'}`
}

export function indexName(table: string, field: string, unique: boolean): string {
  return derivedName(legacyIndexName(table, field, unique))
}

export function createdAtIndexName(table: string): string {
  return derivedName(`${table}__created_at__idx`)
}

/** The condition of live-row indexes; records/store.ts writes the same words in every live-row query. */
const liveRows = sql`where deleted_at is null`

/**
 * The last column of a live-row index. SQLite reads a row to test a query's `deleted_at is null` even
 * when the partial index implies it, unless the index holds `deleted_at` (always null in it, a byte per
 * entry): with it a count or an id walk is answered from the index alone. PostgreSQL drops conditions
 * its partial index implies by itself.
 */
function liveTail(handle: DbHandle): RawBuilder<unknown> {
  return handle.kind === 'sqlite' ? sql`, deleted_at` : sql``
}

/** An `indexed` field's index column, built to serve list sorts (see orderedIndexColumn). */
function sortable(def: FieldDef, handle: DbHandle, layout: TableLayout) {
  const text = fieldTypeOf(def.type).valueKind(def) === 'text'
  if (layout === 'columns') return orderedIndexColumn(handle, def.name, text)
  const key = fieldKey(handle, def.name, [def], layout)
  if (handle.kind === 'sqlite') return key
  return text ? sql`${key} collate "C" nulls first` : sql`${key} nulls first`
}

export async function createFieldIndex(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  def: FieldDef,
  layout: TableLayout,
): Promise<void> {
  const name = indexName(table, def.name, false)
  await sql`create index if not exists ${sql.id(name)} on ${tableIdentifier(handle, table)} (${sortable(def, handle, layout)}, id${liveTail(handle)}) ${liveRows}`.execute(
    db,
  )
  await createExpressionStatistics(db, handle, table, name, [def.name], [def], layout)
}

/**
 * PostgreSQL estimates a condition on an expression from the statistics of an index on it, but never of a
 * partial index (every live-row index is one): without more, `doc ->> 'status' = 'published'` is guessed
 * at 0.5 % of the rows and a kv list sorts a bitmap scan instead of walking the index in order. Extended
 * statistics on the index's expressions (named like the index: they have a namespace of their own) give
 * ANALYZE something to measure. Column tables need none: their columns have statistics of their own.
 */
async function createExpressionStatistics(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  name: string,
  names: readonly string[],
  fields: readonly FieldDef[],
  layout: TableLayout,
): Promise<void> {
  if (handle.kind !== 'postgres' || layout !== 'document') return
  const expressions = names
    .filter((n) => fields.some((f) => f.name === n))
    .map((n) => fieldKey(handle, n, fields, layout))
  if (expressions.length === 0) return
  await sql`create statistics if not exists ${tableIdentifier(handle, name)} on ${sql.join(expressions)} from ${tableIdentifier(handle, table)}`.execute(
    db,
  )
}

async function dropExpressionStatistics(
  db: Kysely<any>,
  handle: DbHandle,
  name: string,
  layout: TableLayout,
): Promise<void> {
  if (handle.kind === 'postgres' && layout === 'document')
    await sql`drop statistics if exists ${tableIdentifier(handle, name)}`.execute(db)
}

export async function dropFieldIndex(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  field: string,
  layout: TableLayout = 'columns',
): Promise<void> {
  const name = indexName(table, field, false)
  await sql`drop index if exists ${tableIdentifier(handle, name)}`.execute(db)
  await dropExpressionStatistics(db, handle, name, layout)
  const legacy = legacyIndexName(table, field, false)
  if (legacy !== name) await sql`drop index if exists ${tableIdentifier(handle, legacy)}`.execute(db)
}

/** Drops a field's unique index (under its derived name and the name used before derivedName). */
export async function dropUniqueIndex(db: Kysely<any>, handle: DbHandle, table: string, field: string): Promise<void> {
  for (const name of new Set([indexName(table, field, true), legacyIndexName(table, field, true)]))
    await sql`drop index if exists ${tableIdentifier(handle, name)}`.execute(db)
}

export async function createCreatedAtIndex(db: Kysely<any>, handle: DbHandle, table: string): Promise<void> {
  await sql`create index ${sql.id(createdAtIndexName(table))} on ${tableIdentifier(handle, table)} (${orderedIndexColumn(handle, 'created_at', false)}, id${liveTail(handle)}) ${liveRows}`.execute(
    db,
  )
}

export async function createIndexes(
  db: Kysely<any>,
  table: string,
  fields: readonly FieldDef[],
  handle: DbHandle,
  layout: TableLayout,
): Promise<void> {
  for (const def of fields) {
    if (columnType(def, handle) === null) continue
    if (def.unique)
      await sql`create unique index if not exists ${sql.id(indexName(table, def.name, true))} on ${tableIdentifier(handle, table)} (${fieldKey(handle, def.name, [def], layout)})`.execute(
        db,
      )
    if (def.indexed) await createFieldIndex(db, handle, table, def, layout)
  }
}

/**
 * One column of a compound index. In the list order (nulls smallest, records/list.ts): ascending NULLS
 * FIRST, descending NULLS LAST on PostgreSQL, SQLite's own order. On PostgreSQL a text column is collated
 * "C" (the list's code-point order) only when it is the last one, the one a list sorts by: the columns
 * before it serve equality filters, which compare in the database's collation, and an index serves a
 * comparison only in its own.
 */
function compoundColumn(
  handle: DbHandle,
  spec: string,
  last: boolean,
  fields: readonly FieldDef[],
  layout: TableLayout,
): RawBuilder<unknown> {
  const { field, descending } = indexColumn(spec)
  const key = fieldKey(handle, field, fields, layout)
  if (handle.kind === 'sqlite') return descending ? sql`${key} desc` : key
  const collate = last && indexColumnIsText(field, fields) ? sql` collate "C"` : sql``
  return descending ? sql`${key}${collate} desc nulls last` : sql`${key}${collate} nulls first`
}

export async function createCompoundIndex(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  index: CompoundIndex,
  fields: readonly FieldDef[],
  layout: TableLayout,
): Promise<void> {
  const columns = index.fields.map((spec, i) =>
    compoundColumn(handle, spec, i === index.fields.length - 1, fields, layout),
  )
  const on = tableIdentifier(handle, table)
  if (index.unique) {
    await sql`create unique index if not exists ${sql.id(index.name)} on ${on} (${sql.join(columns)})`.execute(db)
    return
  }
  const descending = indexColumn(index.fields[index.fields.length - 1]!).descending
  columns.push(descending ? sql`id desc` : sql`id`)
  await sql`create index if not exists ${sql.id(index.name)} on ${on} (${sql.join(columns)}${liveTail(handle)}) ${liveRows}`.execute(
    db,
  )
  await createExpressionStatistics(
    db,
    handle,
    table,
    index.name,
    index.fields.map((spec) => indexColumn(spec).field),
    fields,
    layout,
  )
}

export async function dropCompoundIndex(
  db: Kysely<any>,
  handle: DbHandle,
  name: string,
  layout: TableLayout = 'columns',
): Promise<void> {
  await sql`drop index if exists ${tableIdentifier(handle, name)}`.execute(db)
  await dropExpressionStatistics(db, handle, name, layout)
}
