import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { DbKind } from '../../lib/db/index.js'
import type { structures } from '../collections/index.js'

type Bool = RawBuilder<SqlBool>
type Expr = RawBuilder<unknown>
type JsonKind = 'string' | 'number' | 'boolean' | 'array' | 'object'

/**
 * The narrowing predicate of a scan: SQL that is TRUE for every row whose value might not match the shape
 * (and, where it can, for few others), so a scan reads only those. It is a filter in front of the check
 * in JavaScript, never the check itself: a row it lets through is still examined. Built from the shape
 * alone; every value (enum values, keys) is a bound parameter; the only identifiers are the checked
 * table and column names and aliases made here.
 *
 * The dialects differ in how they walk JSON, so each has a small adapter below; nothing else branches.
 */

/** One JSON value inside the row, as each dialect reaches it. */
type Slot = unknown

interface JsonAdapter {
  readonly yes: Bool
  readonly no: Bool
  /** The column's value; SQLite checks first that the text is JSON at all (a row that is not might be wrong). */
  root(column: Expr, test: (slot: Slot) => Bool): Bool
  entry(slot: Slot, key: string): Slot
  kindIn(slot: Slot, kinds: readonly JsonKind[]): Bool
  /** SQL NULL (a missing key) or JSON null. */
  absent(slot: Slot): Bool
  /** The string a string slot holds, as text. */
  text(slot: Slot): Expr
  someKey(slot: Slot, alias: string, test: (key: Expr) => Bool): Bool
  someItem(slot: Slot, alias: string, test: (item: Slot) => Bool): Bool
  someValue(slot: Slot, alias: string, test: (value: Slot) => Bool): Bool
}

const list = (names: readonly string[]) => sql.join(names.map((name) => sql.lit(name)))
const sqliteKinds: Readonly<Record<JsonKind, readonly string[]>> = {
  string: ['text'],
  number: ['integer', 'real'],
  boolean: ['true', 'false'],
  array: ['array'],
  object: ['object'],
}
const sqliteKindsOf = (kinds: readonly JsonKind[]) => list(kinds.flatMap((k) => sqliteKinds[k]))
/** A key as a quoted label of an SQLite JSON path: `$."a \"b\""`. */
const sqlitePath = (key: string) => `$."${key.replace(/["\\]/g, (c) => `\\${c}`)}"`

// SQLite: a slot is JSON text, or a row of json_each (whose `value` is JSON text only for containers, and
// whose `type` and `atom` tell scalars apart, so a long list is never re-parsed per item).
type SqliteSlot = { json: Expr } | { row: string }
const sqliteJson = (slot: Slot): Expr => {
  const s = slot as SqliteSlot
  return 'json' in s ? s.json : sql`${sql.raw(s.row)}.value`
}
const sqliteType = (slot: Slot): Expr => {
  const s = slot as SqliteSlot
  return 'json' in s ? sql`json_type(${s.json})` : sql`${sql.raw(s.row)}.type`
}
const sqliteEach = (slot: Slot, kind: 'object' | 'array', alias: string, empty: string) =>
  sql`json_each(case when ${sqliteType(slot)} = ${sql.lit(kind)} then ${sqliteJson(slot)} else ${sql.lit(empty)} end) as ${sql.raw(alias)}`

const sqliteAdapter: JsonAdapter = {
  yes: sql<SqlBool>`1`,
  no: sql<SqlBool>`0`,
  root: (column, test) => sql<SqlBool>`(case when json_valid(${column}) then ${test({ json: column })} else 1 end)`,
  entry: (slot, key) => ({ json: sql`(${sqliteJson(slot)} -> ${sqlitePath(key)})` }),
  kindIn: (slot, kinds) => sql<SqlBool>`coalesce(${sqliteType(slot)} in (${sqliteKindsOf(kinds)}), 0)`,
  absent: (slot) => sql<SqlBool>`coalesce(${sqliteType(slot)}, 'null') = 'null'`,
  text: (slot) => {
    const s = slot as SqliteSlot
    return 'json' in s ? sql`(${s.json} ->> '$')` : sql`${sql.raw(s.row)}.atom`
  },
  someKey: (slot, alias, test) =>
    sql<SqlBool>`exists (select 1 from ${sqliteEach(slot, 'object', alias, '{}')} where ${test(sql`${sql.raw(alias)}.key`)})`,
  someItem: (slot, alias, test) =>
    sql<SqlBool>`exists (select 1 from ${sqliteEach(slot, 'array', alias, '[]')} where ${test({ row: alias })})`,
  someValue: (slot, alias, test) =>
    sql<SqlBool>`exists (select 1 from ${sqliteEach(slot, 'object', alias, '{}')} where ${test({ row: alias })})`,
}

// PostgreSQL: a slot is a jsonb expression.
const pgSlot = (slot: Slot) => slot as Expr
const pgGuarded = (slot: Slot, kind: 'object' | 'array', empty: string) =>
  sql`(case when jsonb_typeof(${pgSlot(slot)}) = ${sql.lit(kind)} then ${pgSlot(slot)} else ${sql.lit(empty)}::jsonb end)`

const postgresAdapter: JsonAdapter = {
  yes: sql<SqlBool>`true`,
  no: sql<SqlBool>`false`,
  root: (column, test) => test(column),
  entry: (slot, key) => sql`(${pgSlot(slot)} -> cast(${key} as text))`,
  kindIn: (slot, kinds) => sql<SqlBool>`coalesce(jsonb_typeof(${pgSlot(slot)}) in (${list(kinds)}), false)`,
  absent: (slot) => sql<SqlBool>`coalesce(jsonb_typeof(${pgSlot(slot)}), 'null') = 'null'`,
  text: (slot) => sql`(${pgSlot(slot)} #>> '{}')`,
  someKey: (slot, alias, test) =>
    sql<SqlBool>`exists (select 1 from jsonb_object_keys(${pgGuarded(slot, 'object', '{}')}) as ${sql.raw(alias)}(k) where ${test(sql`${sql.raw(alias)}.k`)})`,
  someItem: (slot, alias, test) =>
    sql<SqlBool>`exists (select 1 from jsonb_array_elements(${pgGuarded(slot, 'array', '[]')}) as ${sql.raw(alias)}(v) where ${test(sql`${sql.raw(alias)}.v`)})`,
  someValue: (slot, alias, test) =>
    sql<SqlBool>`exists (select 1 from jsonb_each(${pgGuarded(slot, 'object', '{}')}) as ${sql.raw(alias)}(k, v) where ${test(sql`${sql.raw(alias)}.v`)})`,
}

const adapters: Readonly<Record<DbKind, JsonAdapter>> = { sqlite: sqliteAdapter, postgres: postgresAdapter }
/** Beyond this many bound values a predicate is not worth it (and SQLite caps parameters). */
const maxParameters = 5000

class TooLarge extends Error {}

/**
 * The predicate for a json column (`column` qualified with its table) and a shape, or null when none is
 * built (too many values to bind). Rows with a NULL column are never wrong and never match.
 */
export function jsonPredicate(kind: DbKind, column: Expr, shape: structures.Shape): Bool | null {
  const a = adapters[kind]
  let aliases = 0
  let parameters = 0
  const bind = (values: readonly string[]) => {
    parameters += values.length
    if (parameters > maxParameters) throw new TooLarge()
    return sql.join(values.map((v) => sql`${v}`))
  }
  const either = (items: Bool[]): Bool =>
    items.length === 0
      ? sql<SqlBool>`${a.no}`
      : items.length === 1
        ? items[0]!
        : sql<SqlBool>`(${sql.join(items, sql` or `)})`
  const ifKind = (slot: Slot, kinds: readonly JsonKind[], then: Bool): Bool =>
    sql<SqlBool>`(case when ${a.kindIn(slot, kinds)} then ${then} else ${a.yes} end)`
  // TRUE when a present, non-null value might not match.
  const wrong = (shape: structures.Shape, slot: Slot): Bool => {
    switch (shape.type) {
      case 'enum':
        return ifKind(
          slot,
          ['string'],
          sql<SqlBool>`coalesce(${a.text(slot)} not in (${bind(shape.values.map((v) => v.value))}), ${a.yes})`,
        )
      case 'string':
      case 'number':
      case 'boolean':
        return sql<SqlBool>`not ${a.kindIn(slot, [shape.type])}`
      case 'object': {
        const parts: Bool[] = Object.entries(shape.entries).map(([key, child]) => {
          const inner = a.entry(slot, key)
          return sql<SqlBool>`(case when ${a.absent(inner)} then ${a.no} else ${wrong(child, inner)} end)`
        })
        if (!shape.additional) {
          const declared = Object.keys(shape.entries)
          const alias = `plinth_s${++aliases}`
          parts.push(
            a.someKey(slot, alias, (key) =>
              declared.length === 0 ? a.yes : sql<SqlBool>`${key} not in (${bind(declared)})`,
            ),
          )
        }
        return ifKind(slot, ['object'], either(parts))
      }
      case 'list': {
        const alias = `plinth_s${++aliases}`
        return ifKind(
          slot,
          ['array'],
          a.someItem(slot, alias, (item) => sql<SqlBool>`(${a.absent(item)} or ${wrong(shape.items, item)})`),
        )
      }
      case 'map': {
        const keys = `plinth_s${++aliases}`
        const values = `plinth_s${++aliases}`
        const allowed = shape.keys.values.map((v) => v.value)
        return ifKind(
          slot,
          ['object'],
          either([
            a.someKey(slot, keys, (key) => sql<SqlBool>`${key} not in (${bind(allowed)})`),
            a.someValue(slot, values, (value) => sql<SqlBool>`(${a.absent(value)} or ${wrong(shape.values, value)})`),
          ]),
        )
      }
    }
  }
  try {
    return sql<SqlBool>`(${column} is not null and ${a.root(column, (slot) => sql<SqlBool>`(case when ${a.absent(slot)} then ${a.no} else ${wrong(shape, slot)} end)`)})`
  } catch (err) {
    if (err instanceof TooLarge) return null
    throw err
  }
}

/** The predicate of an enum column: not null and not one of the values (null when there are too many to bind). */
export function enumColumnPredicate(column: Expr, values: readonly string[]): Bool | null {
  if (values.length > maxParameters) return null
  return sql<SqlBool>`(${column} is not null and ${column} not in (${sql.join(values.map((v) => sql`${v}`))}))`
}
