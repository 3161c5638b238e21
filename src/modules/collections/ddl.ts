import { sql, type Kysely, type RawBuilder } from 'kysely'
import { lockTransaction, orderedIndexColumn, tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { indexColumn, indexColumnIsText, systemColumns, type CompoundIndex } from './definition/index.js'
import { derivedName } from './derived-name.js'
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
function sortable(def: FieldDef, handle: DbHandle) {
  return orderedIndexColumn(handle, def.name, fieldTypeOf(def.type).valueKind(def) === 'text')
}

async function createFieldIndex(db: Kysely<any>, handle: DbHandle, table: string, def: FieldDef): Promise<void> {
  await sql`create index ${sql.id(indexName(table, def.name, false))} on ${tableIdentifier(handle, table)} (${sortable(def, handle)}, id${liveTail(handle)}) ${liveRows}`.execute(db)
}

async function dropFieldIndex(db: Kysely<any>, handle: DbHandle, table: string, field: string): Promise<void> {
  const name = indexName(table, field, false)
  await sql`drop index if exists ${tableIdentifier(handle, name)}`.execute(db)
  const legacy = legacyIndexName(table, field, false)
  if (legacy !== name) await sql`drop index if exists ${tableIdentifier(handle, legacy)}`.execute(db)
}

async function createCreatedAtIndex(db: Kysely<any>, handle: DbHandle, table: string): Promise<void> {
  await sql`create index ${sql.id(createdAtIndexName(table))} on ${tableIdentifier(handle, table)} (${orderedIndexColumn(handle, 'created_at', false)}, id${liveTail(handle)}) ${liveRows}`.execute(db)
}

async function createIndexes(db: Kysely<any>, table: string, fields: readonly FieldDef[], handle: DbHandle): Promise<void> {
  for (const def of fields) {
    if (columnType(def, handle) === null) continue
    if (def.unique) await sql`create unique index ${sql.id(indexName(table, def.name, true))} on ${tableIdentifier(handle, table)} (${sql.id(def.name)})`.execute(db)
    if (def.indexed) await createFieldIndex(db, handle, table, def)
  }
}

/**
 * One column of a compound index. In the list order (nulls smallest, records/list.ts): ascending NULLS
 * FIRST, descending NULLS LAST on PostgreSQL, SQLite's own order. On PostgreSQL a text column is collated
 * "C" (the list's code-point order) only when it is the last one, the one a list sorts by: the columns
 * before it serve equality filters, which compare in the database's collation, and an index serves a
 * comparison only in its own.
 */
function compoundColumn(handle: DbHandle, spec: string, last: boolean, fields: readonly FieldDef[]): RawBuilder<unknown> {
  const { field, descending } = indexColumn(spec)
  if (handle.kind === 'sqlite') return descending ? sql`${sql.id(field)} desc` : sql.id(field)
  const collate = last && indexColumnIsText(field, fields) ? sql` collate "C"` : sql``
  return descending ? sql`${sql.id(field)}${collate} desc nulls last` : sql`${sql.id(field)}${collate} nulls first`
}

async function createCompoundIndex(db: Kysely<any>, handle: DbHandle, table: string, index: CompoundIndex, fields: readonly FieldDef[]): Promise<void> {
  const columns = index.fields.map((spec, i) => compoundColumn(handle, spec, i === index.fields.length - 1, fields))
  const on = tableIdentifier(handle, table)
  if (index.unique) {
    await sql`create unique index ${sql.id(index.name)} on ${on} (${sql.join(columns)})`.execute(db)
    return
  }
  const descending = indexColumn(index.fields[index.fields.length - 1]!).descending
  columns.push(descending ? sql`id desc` : sql`id`)
  await sql`create index ${sql.id(index.name)} on ${on} (${sql.join(columns)}${liveTail(handle)}) ${liveRows}`.execute(db)
}

async function dropCompoundIndex(db: Kysely<any>, handle: DbHandle, name: string): Promise<void> {
  await sql`drop index if exists ${tableIdentifier(handle, name)}`.execute(db)
}

/** Creates the collection's table with the system columns, its fields, indexes and search index, atomically. */
export async function createCollectionTable(handle: DbHandle, table: string, fields: readonly FieldDef[], indexes: readonly CompoundIndex[]): Promise<void> {
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
      ...fields.map((f) => columnDefinition(f, handle, true)).filter((c): c is RawBuilder<unknown> => c !== null),
    ]
    await sql`create table ${tableIdentifier(handle, table)} (${sql.join(columns)})`.execute(trx)
    await createCreatedAtIndex(trx, handle, table)
    await createIndexes(trx, table, fields, handle)
    for (const index of indexes) await createCompoundIndex(trx, handle, table, index, fields)
    if (searchableFields(fields).length > 0) await createSearchIndex({ ...handle, db: trx }, table, fields)
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
  return change.added.some((f) => f.indexed || f.unique) || change.indexToggled.length > 0 || change.indexesDropped.length > 0 || change.indexesAdded.length > 0
}

/**
 * Adds fields, toggles indexes, drops and creates compound indexes, and rebuilds the search index when
 * the searchable fields changed, in one transaction: a refusal changes nothing.
 */
export async function alterCollectionTable(handle: DbHandle, table: string, before: readonly FieldDef[], after: readonly FieldDef[], change: TableChange): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    for (const def of change.added) {
      const column = columnDefinition(def, handle, false)
      if (column) await sql`alter table ${tableIdentifier(handle, table)} add column ${column}`.execute(trx)
    }
    await createIndexes(trx, table, change.added, handle)
    for (const def of change.indexToggled) {
      if (def.indexed) await createFieldIndex(trx, handle, table, def)
      else await dropFieldIndex(trx, handle, table, def.name)
    }
    for (const index of change.indexesDropped) await dropCompoundIndex(trx, handle, index.name)
    for (const index of change.indexesAdded) await createCompoundIndex(trx, handle, table, index, after)
    const searchBefore = searchableFields(before).map((f) => f.name).join(',')
    const searchAfter = searchableFields(after).map((f) => f.name).join(',')
    if (searchBefore !== searchAfter) {
      const scoped = { ...handle, db: trx }
      await dropSearchIndex(scoped, table)
      if (searchAfter !== '') await createSearchIndex(scoped, table, after)
    }
  })
}

/**
 * Brings a table made with an older index layout to the current one (decision 024): its created-at index
 * and the indexes of its `indexed` fields are dropped and made again as live-row indexes, and its compound
 * indexes made if missing; unique indexes are left as they are. Idempotent (every drop is `if exists`,
 * every index is made afresh), atomic, and serialised across instances on PostgreSQL.
 */
export async function rebuildCollectionIndexes(handle: DbHandle, table: string, fields: readonly FieldDef[], indexes: readonly CompoundIndex[]): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    await lockTransaction(trx, handle.kind, `collection-indexes:${handle.schema ?? ''}.${table}`)
    await sql`drop index if exists ${tableIdentifier(handle, createdAtIndexName(table))}`.execute(trx)
    await createCreatedAtIndex(trx, handle, table)
    for (const def of fields) {
      if (!def.indexed || columnType(def, handle) === null) continue
      await dropFieldIndex(trx, handle, table, def.name)
      await createFieldIndex(trx, handle, table, def)
    }
    for (const index of indexes) {
      await dropCompoundIndex(trx, handle, index.name)
      await createCompoundIndex(trx, handle, table, index, fields)
    }
  })
}

/** Drops the collection's table, its indexes and its search index. */
export async function dropCollectionTable(handle: DbHandle, table: string): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    await dropSearchIndex({ ...handle, db: trx }, table)
    await sql`drop table if exists ${tableIdentifier(handle, table)}`.execute(trx)
  })
}
