import { sql, type Kysely, type SqlBool } from 'kysely'
import type { DbHandle } from '../../lib/db/index.js'
import { documentSource, layoutOf, type Collection } from '../collections/index.js'
import type { Opened } from './context.js'
import type { Row } from './store.js'

/**
 * SQL of the data tools (bulk delete, truncate) over one collection's table. Like store.ts, every
 * condition is the caller's row scope compiled through the collection's resolver, and identifiers are
 * collection and field names checked when they were defined.
 */

type Db = Kysely<Record<string, Row>>

/** What reads of a collection's rows select from: its table, or a kv collection's derived table (its document's fields as columns). */
function readFrom(handle: DbHandle, collection: Pick<Collection, 'name' | 'fields' | 'storageType'>) {
  const db = handle.db as Db
  return layoutOf(collection) === 'document'
    ? db.selectFrom(documentSource(handle, collection.name, collection.fields) as unknown as string)
    : db.selectFrom(collection.name)
}

/** Rows with these ids inside the caller's scope (soft-deleted ones only when `includeDeleted`). */
export async function rowsInScope(opened: Opened, ids: readonly string[], includeDeleted: boolean): Promise<Row[]> {
  if (ids.length === 0) return []
  let query = opened.store
    .selectFrom()
    .selectAll()
    .where('id', 'in', [...ids])
  for (const condition of opened.store.where(opened.scope.rows, includeDeleted)) query = query.where(condition)
  return query.execute()
}

/**
 * Soft-deletes the active rows with these ids inside the caller's scope, in one statement, and returns
 * them as written. A row deleted or moved out of scope meanwhile is simply not among them.
 */
export async function softDeleteRows(opened: Opened, ids: readonly string[], set: Row): Promise<Row[]> {
  if (ids.length === 0) return []
  const db = opened.handle.db as Db
  let query = db
    .updateTable(opened.collection.name)
    .set({ ...opened.store.toSet(set), _version: sql`_version + 1` })
    .where('id', 'in', [...ids])
  for (const condition of opened.store.writeWhere(opened.scope.rows, false)) query = query.where(condition)
  const returning = opened.store.returning
  return (returning ? query.returning(returning as never) : query.returningAll()).execute() as Promise<Row[]>
}

/**
 * Deletes every row of the table, soft-deleted ones included; returns how many. A plain DELETE, not
 * TRUNCATE: it reports the count on both databases, and on SQLite it fires the search index's delete
 * trigger for every row (SQLite skips its truncate optimisation on a table with triggers), so the index
 * is emptied in the same statement.
 */
export async function deleteAllRows(handle: DbHandle, table: string): Promise<number> {
  const result = await (handle.db as Db).deleteFrom(table).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Whether any row of the collection (soft-deleted ones included) holds a reference in this relation column. */
export async function holdsReferences(
  handle: DbHandle,
  collection: Collection,
  column: string,
  many: boolean,
): Promise<boolean> {
  // A hasMany list is JSON: `[]` holds nothing. The cast to text reads it alike on both databases.
  const condition = many
    ? sql<SqlBool>`${sql.ref(column)} is not null and cast(${sql.ref(column)} as text) <> '[]'`
    : sql<SqlBool>`${sql.ref(column)} is not null`
  const row = await readFrom(handle, collection).select('id').where(condition).limit(1).executeTakeFirst()
  return row !== undefined
}

// Values per `in (…)` list when looking for file ids held (a page of a collection's files is 200).
const heldChunk = 500

/**
 * Which of `values` some row of the collection (soft-deleted ones included) holds in one of these text
 * columns. The columns are field names checked when they were defined.
 */
export async function heldValues(
  handle: DbHandle,
  collection: Collection,
  columns: readonly string[],
  values: readonly string[],
): Promise<Set<string>> {
  const held = new Set<string>()
  if (columns.length === 0) return held
  for (let i = 0; i < values.length; i += heldChunk) {
    const slice = values.slice(i, i + heldChunk)
    const wanted = new Set(slice)
    const rows = await readFrom(handle, collection)
      .select([...columns])
      .where((eb) => eb.or(columns.map((column) => eb(column, 'in', slice))))
      .execute()
    for (const row of rows) {
      for (const column of columns) {
        const value = row[column]
        if (typeof value === 'string' && wanted.has(value)) held.add(value)
      }
    }
  }
  return held
}
