import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely'
import { tableIdentifier, type DbHandle, type DbKind } from '../../lib/db/index.js'
import { systemColumns } from './definition/index.js'
import { fieldTypeOf, type FieldDef } from './field-types/index.js'

/**
 * The `kv` storage type (decision 035): a key-value table, id → JSON document. The table has the key,
 * the system columns (the record's metadata: times, authors, soft delete, version, owner) and one JSON
 * column `doc` holding every stored field; a field is a key of the document, so adding one changes no
 * table. Reads see the document through a derived table that names each field's JSON expression like
 * the column a `d1` table has, so the filter compiler, sorts, cursors and counts run unchanged, in SQL:
 * both databases fold the derived table into the query, and an expression index on the very same
 * expression serves it.
 *
 * Each field's expression yields what a `d1` column of its type holds: SQLite `json_extract` (a JSON true
 * reads 1, as a boolean column holds) or `->` for JSON values (their text, as a TEXT column holds them);
 * PostgreSQL `->>` cast to the field's column type, or `->` (jsonb) for JSON values. A null value is no
 * key at all, so every expression is SQL NULL for it, as a column would be. Keys are field names checked
 * when defined (`[a-z][a-z0-9_]*`) and written as literals: an expression index applies only to the
 * expression spelled alike, never to a bound parameter.
 */

export const documentColumn = 'doc'

/** Whether a collection of this storage type keeps its fields in a JSON document. */
export function isDocumentStorage(storageType: string): boolean {
  return storageType === 'kv'
}

/** The SQL type of the document column. */
export function documentColumnType(kind: DbKind): string {
  return kind === 'sqlite' ? 'TEXT' : 'jsonb'
}

function holdsJson(def: FieldDef): boolean {
  return fieldTypeOf(def.type).valueKind(def) === 'json'
}

/** Fields with a value in the document (computed ones have none). */
export function documentFields(fields: readonly FieldDef[]): FieldDef[] {
  return fields.filter((f) => fieldTypeOf(f.type).column(f, 'sqlite') !== null)
}

/**
 * One field's value read from the document, as the column of a `d1` table would hold it. `row` qualifies
 * the document column (a trigger's `new`).
 */
export function fieldExpression(kind: DbKind, def: FieldDef, row?: string): RawBuilder<unknown> {
  const doc = row ? sql.ref(`${row}.${documentColumn}`) : sql.ref(documentColumn)
  if (kind === 'sqlite')
    return holdsJson(def)
      ? sql`(${doc} -> ${sql.lit(`$.${def.name}`)})`
      : sql`json_extract(${doc}, ${sql.lit(`$.${def.name}`)})`
  if (holdsJson(def)) return sql`(${doc} -> ${sql.lit(def.name)})`
  const type = fieldTypeOf(def.type).column(def, kind) ?? 'text'
  const text = sql`(${doc} ->> ${sql.lit(def.name)})`
  return type === 'text' ? text : sql`cast(${text} as ${sql.raw(type)})`
}

/** The columns a read sees: the system columns, then each stored field named by its expression. */
function selectList(kind: DbKind, fields: readonly FieldDef[]): RawBuilder<unknown>[] {
  return [
    ...systemColumns.map((c) => sql.ref(c.name)),
    ...documentFields(fields).map((f) => sql`${fieldExpression(kind, f)} as ${sql.id(f.name)}`),
  ]
}

/**
 * The table as reads see it: a derived table under the collection's own name with a column per field, so
 * every query written for a `d1` table (filters, sorts, counts, `select *`) reads the document alike.
 */
export function documentSource(
  handle: DbHandle,
  table: string,
  fields: readonly FieldDef[],
): AliasedRawBuilder<Record<string, unknown>, string> {
  return sql<
    Record<string, unknown>
  >`(select ${sql.join(selectList(handle.kind, fields))} from ${tableIdentifier(handle, table)})`.as(table)
}

/** What an INSERT, UPDATE or DELETE … RETURNING answers: the row as a read sees it. */
export function documentReturning(
  kind: DbKind,
  fields: readonly FieldDef[],
): (string | AliasedRawBuilder<unknown, string>)[] {
  return [
    ...systemColumns.map((c) => c.name),
    ...documentFields(fields).map((f) => fieldExpression(kind, f).as(f.name)),
  ]
}

const systemNames: ReadonlySet<string> = new Set(systemColumns.map((c) => c.name))

/**
 * A row as the records layer writes it (system columns and field columns, values as a `d1` column stores
 * them) turned into the table's: the system columns, and the fields as one JSON document. JSON-valued
 * fields arrive as their JSON text and are put in as JSON; a null leaves the key out.
 */
export function packDocument(
  fields: readonly FieldDef[],
  row: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const json = jsonFieldNames(fields)
  const out: Record<string, unknown> = {}
  const entries: string[] = []
  for (const [key, value] of Object.entries(row)) {
    if (systemNames.has(key)) {
      out[key] = value
      continue
    }
    if (value === null || value === undefined) continue
    entries.push(`${JSON.stringify(key)}:${json.has(key) && typeof value === 'string' ? value : JSON.stringify(value)}`)
  }
  out[documentColumn] = `{${entries.join(',')}}`
  return out
}

const jsonNames = new WeakMap<readonly FieldDef[], ReadonlySet<string>>()
function jsonFieldNames(fields: readonly FieldDef[]): ReadonlySet<string> {
  let names = jsonNames.get(fields)
  if (!names) jsonNames.set(fields, (names = new Set(fields.filter(holdsJson).map((f) => f.name))))
  return names
}

/**
 * The SET of an UPDATE: system columns as they are, field values written into the document in place
 * (JSON values as JSON, a null removing the key) with the other keys left alone.
 */
export function documentSet(
  kind: DbKind,
  fields: readonly FieldDef[],
  set: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const json = jsonFieldNames(fields)
  const out: Record<string, unknown> = {}
  const removed: string[] = []
  const written: [string, string][] = []
  for (const [key, value] of Object.entries(set)) {
    if (systemNames.has(key)) out[key] = value
    else if (value === null) removed.push(key)
    else if (value !== undefined)
      written.push([key, json.has(key) && typeof value === 'string' ? value : JSON.stringify(value)])
  }
  if (removed.length === 0 && written.length === 0) return out
  const doc = sql.ref(documentColumn)
  if (kind === 'sqlite') {
    const kept = removed.length > 0 ? sql`json_remove(${doc}, ${sql.join(removed.map((k) => `$.${k}`))})` : doc
    out[documentColumn] =
      written.length > 0
        ? sql`json_set(${kept}, ${sql.join(written.map(([k, v]) => sql`${`$.${k}`}, json(${v})`))})`
        : kept
  } else {
    const kept = removed.length > 0 ? sql`(${doc} - cast(${removed} as text[]))` : doc
    out[documentColumn] =
      written.length > 0
        ? sql`(${kept} || cast(${`{${written.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`} as jsonb))`
        : kept
  }
  return out
}
