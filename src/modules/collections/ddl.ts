import { sql, type Kysely, type RawBuilder } from 'kysely'
import { orderedIndexColumn, tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { systemColumns } from './definition/index.js'
import { derivedName } from './derived-name.js'
import { fieldTypeOf, type FieldDef } from './field-types/index.js'
import { createSearchIndex, dropSearchIndex, searchableFields } from './search-index.js'

/**
 * The SQL schema of collections in their database. Identifiers are collection and field names that
 * passed the naming rules (`/^[a-z][a-z0-9_]{0,49}$/`), always quoted with sql.id; column types come
 * from the field-type registry, never from a client.
 */

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

async function createIndexes(db: Kysely<any>, table: string, fields: readonly FieldDef[], handle: DbHandle): Promise<void> {
  for (const def of fields) {
    if (columnType(def, handle) === null) continue
    if (def.unique) await sql`create unique index ${sql.id(indexName(table, def.name, true))} on ${tableIdentifier(handle, table)} (${sql.id(def.name)})`.execute(db)
    if (def.indexed) await sql`create index ${sql.id(indexName(table, def.name, false))} on ${tableIdentifier(handle, table)} (${sortable(def, handle)})`.execute(db)
  }
}

/** An `indexed` field's index column, built to serve list sorts (see orderedIndexColumn). */
function sortable(def: FieldDef, handle: DbHandle) {
  return orderedIndexColumn(handle, def.name, fieldTypeOf(def.type).valueKind(def) === 'text')
}

/** Creates the collection's table with the system columns, its fields, indexes and search index, atomically. */
export async function createCollectionTable(handle: DbHandle, table: string, fields: readonly FieldDef[]): Promise<void> {
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
    await sql`create index ${sql.id(derivedName(`${table}__created_at__idx`))} on ${tableIdentifier(handle, table)} (${orderedIndexColumn(handle, 'created_at', false)}, id)`.execute(trx)
    await createIndexes(trx, table, fields, handle)
    if (searchableFields(fields).length > 0) await createSearchIndex({ ...handle, db: trx }, table, fields)
  })
}

/** Adds fields and toggles indexes; rebuilds the search index when the searchable fields changed. */
export async function alterCollectionTable(
  handle: DbHandle,
  table: string,
  before: readonly FieldDef[],
  after: readonly FieldDef[],
  change: { added: readonly FieldDef[]; indexToggled: readonly FieldDef[] },
): Promise<void> {
  await handle.db.transaction().execute(async (trx) => {
    for (const def of change.added) {
      const column = columnDefinition(def, handle, false)
      if (column) await sql`alter table ${tableIdentifier(handle, table)} add column ${column}`.execute(trx)
    }
    await createIndexes(trx, table, change.added, handle)
    for (const def of change.indexToggled) {
      const name = indexName(table, def.name, false)
      if (def.indexed) {
        await sql`create index ${sql.id(name)} on ${tableIdentifier(handle, table)} (${sql.id(def.name)})`.execute(trx)
        continue
      }
      await sql`drop index if exists ${tableIdentifier(handle, name)}`.execute(trx)
      const legacy = legacyIndexName(table, def.name, false)
      if (legacy !== name) await sql`drop index if exists ${tableIdentifier(handle, legacy)}`.execute(trx)
    }
    const searchBefore = searchableFields(before).map((f) => f.name).join(',')
    const searchAfter = searchableFields(after).map((f) => f.name).join(',')
    if (searchBefore !== searchAfter) {
      const scoped = { ...handle, db: trx }
      await dropSearchIndex(scoped, table)
      if (searchAfter !== '') await createSearchIndex(scoped, table, after)
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
