import { sql, type RawBuilder } from 'kysely'
import { describeTable, lockTransaction, tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import {
  columnType,
  createCompoundIndex,
  createCreatedAtIndex,
  createdAtIndexName,
  createFieldIndex,
  createIndexes,
  dropCompoundIndex,
  dropFieldIndex,
} from './ddl-indexes.js'
import { dropFieldStorage, renameFieldStorage } from './ddl-fields.js'
import { systemColumns, type CompoundIndex } from './definition/index.js'
import { derivedName } from './derived-name.js'
import { documentColumn, documentColumnType } from './document-table.js'
import type { FieldDef } from './field-types/index.js'
import type { TableLayout } from './table-layout.js'
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

export type { TableLayout } from './table-layout.js'

function columnDefinition(def: FieldDef, handle: DbHandle, creating: boolean): RawBuilder<unknown> | null {
  const type = columnType(def, handle)
  if (type === null) return null
  const parts = [sql`${sql.id(def.name)} ${sql.raw(type)}`]
  // NOT NULL only at creation: adding a required column to a table that has rows would need a value for
  // each of them; the records layer enforces `required` on every write either way.
  if (def.required && creating) parts.push(sql`not null`)
  return sql.join(parts, sql` `)
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
  /** Fields renamed, with their definitions before (old name) and after (new name). */
  readonly renamed?: readonly { readonly from: FieldDef; readonly to: FieldDef }[]
  readonly dropped?: readonly FieldDef[]
}

/** Whether a change touches indexes (then the planner's statistics are refreshed after it). */
export function changesIndexes(change: TableChange): boolean {
  return (
    change.added.some((f) => f.indexed || f.unique) ||
    change.indexToggled.length > 0 ||
    change.indexesDropped.length > 0 ||
    change.indexesAdded.length > 0 ||
    (change.renamed ?? []).some(({ to }) => to.indexed || to.unique) ||
    (change.dropped ?? []).some((f) => f.indexed || f.unique)
  )
}

/**
 * Renames and drops fields, adds fields, toggles indexes, drops and creates compound indexes, and rebuilds
 * the search index when the searchable fields changed, in one transaction: a refusal changes nothing. A
 * document table gets no column for a new field (it is a new key of the documents); only its indexes are
 * made. The search index and the compound indexes dropped go before any column changes (SQLite refuses to
 * drop a column an index or trigger uses; an index over a renamed field has a new derived name, so it is
 * one dropped and one added). `within` (the rows' checks and rewrites) runs after the columns change and
 * before any index is made, in the same transaction, with the transaction's handle.
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
  const searchNames = (fields: readonly FieldDef[]) =>
    searchableFields(fields)
      .map((f) => f.name)
      .join(',')
  const renamed = change.renamed ?? []
  // A renamed column keeps its place in the search index: SQLite rewrites the triggers that name it and
  // PostgreSQL the generated column, so only another set of fields rebuilds it (a document's keys move, so
  // a kv table's is rebuilt).
  const formerName = new Map(renamed.map(({ from, to }) => [to.name, from.name]))
  const asBefore = layout === 'columns' ? after.map((f) => ({ ...f, name: formerName.get(f.name) ?? f.name })) : after
  const searchChanged = searchNames(before) !== searchNames(asBefore)
  await handle.db.transaction().execute(async (trx) => {
    const scoped = { ...handle, db: trx }
    // The registry is written after this commits, in another database: if the process dies in between, the
    // client sends the PATCH again, so each step finds its work done and passes (columns as they are, and
    // indexes made `if not exists`).
    const columns = new Set(layout === 'columns' ? (await describeTable(scoped, table)).map((c) => c.name) : [])
    if (searchChanged) await dropSearchIndex(scoped, table, layout)
    for (const index of change.indexesDropped) await dropCompoundIndex(trx, handle, index.name, layout)
    for (const { from, to } of renamed) {
      const done = layout === 'columns' && !columns.has(from.name) && columns.has(to.name)
      await renameFieldStorage(trx, handle, table, from, to, layout, done)
    }
    for (const def of change.dropped ?? []) {
      const done = layout === 'columns' && !columns.has(def.name)
      await dropFieldStorage(trx, handle, table, def, layout, done)
    }
    for (const def of layout === 'columns' ? change.added : []) {
      if (columns.has(def.name)) continue
      const column = columnDefinition(def, handle, false)
      if (column) await sql`alter table ${tableIdentifier(handle, table)} add column ${column}`.execute(trx)
    }
    // Rows the change checks and rewrites, before any new index exists: a value the rows refuse is the
    // change's 409 naming them, never a database error from an index over the new definition (a kv table's
    // indexes are over a cast to the field's type). A refusal undoes the DDL above too.
    if (within) await within(scoped)
    // A renamed field's indexes are made under its new name, as its new definition says.
    await createIndexes(trx, table, [...change.added, ...renamed.map(({ to }) => to)], handle, layout)
    const renamedNames = new Set(renamed.map(({ to }) => to.name))
    for (const def of change.indexToggled.filter((d) => !renamedNames.has(d.name))) {
      if (def.indexed) await createFieldIndex(trx, handle, table, def, layout)
      else await dropFieldIndex(trx, handle, table, def.name, layout)
    }
    for (const index of change.indexesAdded) await createCompoundIndex(trx, handle, table, index, after, layout)
    if (searchChanged && searchNames(after) !== '') await createSearchIndex(scoped, table, after, layout)
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
