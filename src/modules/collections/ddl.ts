import { sql, type Kysely, type RawBuilder } from 'kysely'
import { lockTransaction, orderedIndexColumn, tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { indexColumn, indexColumnIsText, systemColumns, type CompoundIndex } from './definition/index.js'
import { derivedName } from './derived-name.js'
import { documentColumn, documentColumnType, fieldExpression } from './document-table.js'
import { fieldTypeOf, type FieldDef } from './field-types/index.js'
import { createSearchIndex, dropSearchIndex, searchableFields } from './search-index.js'

/**
 * The SQL schema of collections in their database. Identifiers are collection and field names that
 * passed the naming rules (`/^[a-z][a-z0-9_]{0,49}$/`), always quoted with sql.id; column types come
 * from the field-type registry, never from a client.
 *
 * Indexes serve live rows (decision 024): every index but a unique one is partial, `WHERE deleted_at IS
 * NULL`, the condition every list of live rows carries word for word (records/store.ts), so a list is
 * answered from the index without reading rows to test `deleted_at`, and soft-deleted rows cost nothing
 * in it. Unique indexes stay whole: a value stays taken while its record is soft-deleted, so a restore
 * can never collide. Non-unique indexes end in `id`, the tie-breaker of every list order (then, on
 * SQLite, `deleted_at`: see liveTail).
 */

/** The layout of indexes this build makes; the registry records each collection's (`index_layout`). */
export const currentIndexLayout = 2

/**
 * Where a table keeps its fields: a column each (`d1`, `remote`, `durable_object`), or keys of one JSON
 * document (`kv`, document-table.ts), whose indexes are expression indexes over the same expressions reads use.
 */
export type TableLayout = 'columns' | 'document'

/** What an index names for a field (or a system column): its column, or its expression in the document. */
function fieldKey(
  handle: DbHandle,
  name: string,
  fields: readonly FieldDef[],
  layout: TableLayout,
): RawBuilder<unknown> {
  const def = layout === 'document' ? fields.find((f) => f.name === name) : undefined
  return def ? sql`(${fieldExpression(handle.kind, def)})` : sql.id(name)
}

/** The column type of a stored field in this dialect (null for computed fields). */
function columnType(def: FieldDef, handle: DbHandle): string | null {
  return fieldTypeOf(def.type).column(def, handle.kind)
}

function columnDefinition(def: FieldDef, handle: DbHandle, creating: boolean): RawBuilder<unknown> | null {
  const type = columnType(def, handle)
  if (type === null) return null
  const parts = [sql`${sql.id(def.name)} ${sql.raw(type)}`]
  // NOT NULL only at creation: adding a required column to a table that has rows would need a value for
  // each of them; the records layer enforces `required` on every write either way.
  if (def.required && creating) parts.push(sql`not null`)
  return sql.join(parts, sql` `)
}

// Before derivedName, a long name was used as it was (PostgreSQL cut it to 63 bytes itself); dropping
// an index also tries that name, so indexes made then can still be toggled off.
function legacyIndexName(table: string, field: string, unique: boolean): string {
  return `${table}__${field}__${unique ? 'uq' : 'idx'}`
}

function indexName(table: string, field: string, unique: boolean): string {
  return derivedName(legacyIndexName(table, field, unique))
}

function createdAtIndexName(table: string): string {
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

async function createFieldIndex(
  db: Kysely<any>,
  handle: DbHandle,
  table: string,
  def: FieldDef,
  layout: TableLayout,
): Promise<void> {
  const name = indexName(table, def.name, false)
  await sql`create index ${sql.id(name)} on ${tableIdentifier(handle, table)} (${sortable(def, handle, layout)}, id${liveTail(handle)}) ${liveRows}`.execute(
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
  await sql`create statistics ${tableIdentifier(handle, name)} on ${sql.join(expressions)} from ${tableIdentifier(handle, table)}`.execute(
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

async function dropFieldIndex(
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

async function createCreatedAtIndex(db: Kysely<any>, handle: DbHandle, table: string): Promise<void> {
  await sql`create index ${sql.id(createdAtIndexName(table))} on ${tableIdentifier(handle, table)} (${orderedIndexColumn(handle, 'created_at', false)}, id${liveTail(handle)}) ${liveRows}`.execute(
    db,
  )
}

async function createIndexes(
  db: Kysely<any>,
  table: string,
  fields: readonly FieldDef[],
  handle: DbHandle,
  layout: TableLayout,
): Promise<void> {
  for (const def of fields) {
    if (columnType(def, handle) === null) continue
    if (def.unique)
      await sql`create unique index ${sql.id(indexName(table, def.name, true))} on ${tableIdentifier(handle, table)} (${fieldKey(handle, def.name, [def], layout)})`.execute(
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

async function createCompoundIndex(
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
    await sql`create unique index ${sql.id(index.name)} on ${on} (${sql.join(columns)})`.execute(db)
    return
  }
  const descending = indexColumn(index.fields[index.fields.length - 1]!).descending
  columns.push(descending ? sql`id desc` : sql`id`)
  await sql`create index ${sql.id(index.name)} on ${on} (${sql.join(columns)}${liveTail(handle)}) ${liveRows}`.execute(
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

async function dropCompoundIndex(
  db: Kysely<any>,
  handle: DbHandle,
  name: string,
  layout: TableLayout = 'columns',
): Promise<void> {
  await sql`drop index if exists ${tableIdentifier(handle, name)}`.execute(db)
  await dropExpressionStatistics(db, handle, name, layout)
}

/**
 * Creates the collection's table with the system columns, its fields (columns, or the document column),
 * indexes and search index, atomically.
 */
export async function createCollectionTable(
  handle: DbHandle,
  table: string,
  fields: readonly FieldDef[],
  indexes: readonly CompoundIndex[],
  layout: TableLayout = 'columns',
): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    const columns = [
      ...systemColumns.map((c) => {
        const parts = [sql`${sql.id(c.name)} ${sql.raw(c.type[handle.kind])}`]
        // Named like the other derived objects: PostgreSQL would call it `<table>_pkey`, an index name a
        // collection may take (`a_pkey` beside `a` would be a 500 ddl_error).
        if (c.primaryKey) parts.push(sql`constraint ${sql.id(derivedName(`${table}__pkey`))} primary key`)
        else if (c.notNull) parts.push(sql`not null`)
        if (c.defaultValue !== undefined) parts.push(sql`default ${sql.raw(String(c.defaultValue))}`)
        return sql.join(parts, sql` `)
      }),
      ...(layout === 'document'
        ? [sql`${sql.id(documentColumn)} ${sql.raw(documentColumnType(handle.kind))} not null default '{}'`]
        : fields.map((f) => columnDefinition(f, handle, true)).filter((c): c is RawBuilder<unknown> => c !== null)),
    ]
    await sql`create table ${tableIdentifier(handle, table)} (${sql.join(columns)})`.execute(trx)
    await createCreatedAtIndex(trx, handle, table)
    await createIndexes(trx, table, fields, handle, layout)
    for (const index of indexes) await createCompoundIndex(trx, handle, table, index, fields, layout)
    if (searchableFields(fields).length > 0) await createSearchIndex({ ...handle, db: trx }, table, fields, layout)
  })
}

/** What a PATCH changes in the table. */
export interface TableChange {
  readonly added: readonly FieldDef[]
  readonly indexToggled: readonly FieldDef[]
  readonly indexesDropped: readonly CompoundIndex[]
  readonly indexesAdded: readonly CompoundIndex[]
}

/** Whether a change touches indexes (then the planner's statistics are refreshed after it). */
export function changesIndexes(change: TableChange): boolean {
  return (
    change.added.some((f) => f.indexed || f.unique) ||
    change.indexToggled.length > 0 ||
    change.indexesDropped.length > 0 ||
    change.indexesAdded.length > 0
  )
}

/**
 * Adds fields, toggles indexes, drops and creates compound indexes, and rebuilds the search index when
 * the searchable fields changed, in one transaction: a refusal changes nothing. A document table gets no
 * column for a new field (it is a new key of the documents); only its indexes are made. `within` runs
 * last, in the same transaction, with the transaction's handle.
 */
export async function alterCollectionTable(
  handle: DbHandle,
  table: string,
  before: readonly FieldDef[],
  after: readonly FieldDef[],
  change: TableChange,
  layout: TableLayout = 'columns',
  within?: (scoped: DbHandle) => Promise<void>,
): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    for (const def of layout === 'columns' ? change.added : []) {
      const column = columnDefinition(def, handle, false)
      if (column) await sql`alter table ${tableIdentifier(handle, table)} add column ${column}`.execute(trx)
    }
    await createIndexes(trx, table, change.added, handle, layout)
    for (const def of change.indexToggled) {
      if (def.indexed) await createFieldIndex(trx, handle, table, def, layout)
      else await dropFieldIndex(trx, handle, table, def.name, layout)
    }
    for (const index of change.indexesDropped) await dropCompoundIndex(trx, handle, index.name, layout)
    for (const index of change.indexesAdded) await createCompoundIndex(trx, handle, table, index, after, layout)
    const searchBefore = searchableFields(before)
      .map((f) => f.name)
      .join(',')
    const searchAfter = searchableFields(after)
      .map((f) => f.name)
      .join(',')
    if (searchBefore !== searchAfter) {
      const scoped = { ...handle, db: trx }
      await dropSearchIndex(scoped, table, layout)
      if (searchAfter !== '') await createSearchIndex(scoped, table, after, layout)
    }
    // Rows the change rewrites (enum values mapped), in the same transaction: a refusal undoes the DDL too.
    if (within) await within({ ...handle, db: trx })
  })
}

/**
 * Brings a table made with an older index layout to the current one (decision 024): its created-at index
 * and the indexes of its `indexed` fields are dropped and made again as live-row indexes, and its compound
 * indexes made if missing; unique indexes are left as they are. Idempotent (every drop is `if exists`,
 * every index is made afresh), atomic, and serialised across instances on PostgreSQL.
 */
export async function rebuildCollectionIndexes(
  handle: DbHandle,
  table: string,
  fields: readonly FieldDef[],
  indexes: readonly CompoundIndex[],
  layout: TableLayout = 'columns',
): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    await lockTransaction(trx, handle.kind, `collection-indexes:${handle.schema ?? ''}.${table}`)
    await sql`drop index if exists ${tableIdentifier(handle, createdAtIndexName(table))}`.execute(trx)
    await createCreatedAtIndex(trx, handle, table)
    for (const def of fields) {
      if (!def.indexed || columnType(def, handle) === null) continue
      await dropFieldIndex(trx, handle, table, def.name, layout)
      await createFieldIndex(trx, handle, table, def, layout)
    }
    for (const index of indexes) {
      await dropCompoundIndex(trx, handle, index.name, layout)
      await createCompoundIndex(trx, handle, table, index, fields, layout)
    }
  })
}

/** Drops the collection's table, its indexes and its search index. */
export async function dropCollectionTable(
  handle: DbHandle,
  table: string,
  layout: TableLayout = 'columns',
): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    await dropSearchIndex({ ...handle, db: trx }, table, layout)
    await sql`drop table if exists ${tableIdentifier(handle, table)}`.execute(trx)
  })
}
