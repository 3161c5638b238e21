import { sql, type RawBuilder, type SqlBool } from 'kysely'
import { AppError } from '../errors.js'
import type { DbKind } from '../db/index.js'

/** The kinds of a non-null filter literal. */
export type ValueKind = 'string' | 'number' | 'boolean'
/** The kinds of a JSON value, as the compiler names them (each dialect spells them its own way). */
export type JsonKind = ValueKind | 'array' | 'object'
export type Bool = RawBuilder<SqlBool>
type Value = string | number | boolean

/**
 * One value inside a JSON column (the column itself for an empty path). `isNull` is TRUE for SQL NULL, JSON
 * null and a missing key alike; the other tests are NULL for those, which the compiler never negates.
 */
export interface JsonSlot {
  isNull(): Bool
  notNull(): Bool
  isKind(kinds: readonly JsonKind[]): Bool
  /** The value as SQL that compares with `param(kind, …)`; meaningful only where `isKind([kind])`. */
  value(kind: ValueKind): RawBuilder<unknown>
  param(kind: ValueKind, value: Value): RawBuilder<unknown>
  /** TRUE when a JSON array holds the scalar itself (same type and value); meaningful only on an array. */
  arrayHas(kind: ValueKind, value: Value): Bool
}

/**
 * The handful of things SQLite and PostgreSQL spell differently, so that the compiler never branches on the
 * dialect. Every value arrives as a bound parameter; only constants of this file are written into SQL.
 */
export interface SqlDialect {
  readonly kind: DbKind
  /** Whether a stored string may contain U+0000 (PostgreSQL text and jsonb refuse it). */
  readonly storesNul: boolean
  /** A literal compared with a plain column of that kind. */
  param(kind: ValueKind, value: Value): RawBuilder<unknown>
  /** A column reference no index is used for (SQLite's documented unary `+`); the column itself elsewhere. */
  unindexed(ref: RawBuilder<unknown>): RawBuilder<unknown>
  /** Text that orders by code point, whatever the column's or the database's collation. */
  byCodePoint(text: RawBuilder<unknown>): RawBuilder<unknown>
  /** The substring tests, case-sensitive and literal; the needle is never empty. */
  includes(text: RawBuilder<unknown>, needle: string, negate: boolean): Bool
  startsWith(text: RawBuilder<unknown>, prefix: string, negate: boolean): Bool
  endsWith(text: RawBuilder<unknown>, suffix: string, negate: boolean): Bool
  json(column: RawBuilder<unknown>, path: readonly string[]): JsonSlot
}

const equality = (negate: boolean) => sql.raw(negate ? '<>' : '=')
/** `= 'a'` or `in ('a', 'b')` over constants of this file, written into the SQL as literals. */
const oneOf = (names: readonly string[]) =>
  names.length === 1 ? sql`= ${sql.lit(names[0])}` : sql`in (${sql.join(names.map((name) => sql.lit(name)))})`

// SQLite: booleans are 0 and 1 (bound as such here, not left to the connection's plugin), strings are
// compared as UTF-8 bytes under BINARY, which is code point order. length() and a negative substr() stop
// at the first NUL of a text, so the suffix test works on the bytes of a BLOB instead; instr() does not stop.
const sqliteKinds: Readonly<Record<JsonKind, readonly string[]>> = {
  string: ['text'],
  number: ['integer', 'real'],
  boolean: ['true', 'false'],
  array: ['array'],
  object: ['object'],
}
const sqliteParam = (_kind: ValueKind, value: Value) => sql`${typeof value === 'boolean' ? Number(value) : value}`

const sqliteDialect: SqlDialect = {
  kind: 'sqlite',
  storesNul: true,
  param: sqliteParam,
  unindexed: (ref) => sql`+${ref}`,
  byCodePoint: (text) => sql`${text} collate binary`,
  includes: (text, needle, negate) => sql`instr(${text}, ${needle}) ${sql.raw(negate ? '=' : '>')} 0`,
  // instr() finds the first occurrence, so a prefix sits at 1.
  startsWith: (text, prefix, negate) => sql`instr(${text}, ${prefix}) ${equality(negate)} 1`,
  // substr() of an empty BLOB is NULL, not an empty BLOB: the empty text is told apart first.
  endsWith: (text, suffix, negate) => {
    const tail = sql`substr(cast(${text} as blob), -length(cast(${suffix} as blob)))`
    return negate ? sql`(${text} = '' or ${tail} <> cast(${suffix} as blob))` : sql`${tail} = cast(${suffix} as blob)`
  },
  json(column, path) {
    // Keys are checked identifiers (checkJsonPath), so quoting them needs no escaping; the path is bound.
    const jsonPath = `$${path.map((key) => `."${key}"`).join('')}`
    const type = sql`json_type(${column}, ${jsonPath})`
    return {
      isNull: () => sql<SqlBool>`coalesce(${type}, 'null') = 'null'`,
      notNull: () => sql<SqlBool>`${type} <> 'null'`,
      isKind: (kinds) => sql<SqlBool>`${type} ${oneOf(kinds.flatMap((kind) => sqliteKinds[kind]))}`,
      value: () => sql`json_extract(${column}, ${jsonPath})`,
      param: sqliteParam,
      // Inside the subquery an unqualified column named like one of json_each's own (value, type, key, id,
      // path…) would mean json_each's; read from a FROM-less derived table, the name can only be the outer row's.
      arrayHas: (kind, value) => {
        const items = sql`(select ${column} as plinth_json) as plinth_src, json_each(plinth_src.plinth_json, ${jsonPath}) as plinth_item`
        const match = sql`plinth_item.type ${oneOf(sqliteKinds[kind])} and plinth_item.atom = ${sqliteParam(kind, value)}`
        return sql<SqlBool>`exists (select 1 from ${items} where ${match})`
      },
    }
  },
}

// PostgreSQL: an integral number is bound as bigint so that an index on an integer column still applies,
// any other as double precision (what a JavaScript number is); text orders under COLLATE "C". JSON numbers
// and booleans are compared as jsonb (numbers numerically, false < true), JSON strings as text (#>>).
const pgCast = { string: 'text', number: 'double precision', boolean: 'boolean' } as const
const pgParam = (kind: ValueKind, value: Value) =>
  kind === 'number' && Number.isSafeInteger(value)
    ? sql`cast(${value} as bigint)`
    : sql`cast(${value} as ${sql.raw(pgCast[kind])})`

const postgresDialect: SqlDialect = {
  kind: 'postgres',
  storesNul: false,
  unindexed: (ref) => ref,
  param: pgParam,
  byCodePoint: (text) => sql`${text} collate "C"`,
  includes: (text, needle, negate) => sql`strpos(${text}, ${needle}) ${sql.raw(negate ? '=' : '>')} 0`,
  startsWith: (text, prefix, negate) => sql`${sql.raw(negate ? 'not ' : '')}starts_with(${text}, ${prefix})`,
  endsWith: (text, suffix, negate) =>
    sql`right(${text}, char_length(cast(${suffix} as text))) ${equality(negate)} ${suffix}`,
  json(column, path) {
    const value = path.length === 0 ? column : sql`(${column} #> cast(${path} as text[]))`
    const text = sql`(${column} #>> cast(${path} as text[]))`
    const type = sql`jsonb_typeof(${value})`
    const param = (kind: ValueKind, literal: Value) =>
      kind === 'string' ? sql`${literal}` : sql`to_jsonb(cast(${literal} as ${sql.raw(pgCast[kind])}))`
    return {
      isNull: () => sql<SqlBool>`coalesce(${type}, 'null') = 'null'`,
      notNull: () => sql<SqlBool>`${type} <> 'null'`,
      isKind: (kinds) => sql<SqlBool>`${type} ${oneOf(kinds)}`,
      value: (kind) => (kind === 'string' ? text : value),
      param,
      // For a scalar on the right, @> looks only at the array's own elements, never into nested ones.
      arrayHas: (kind, literal) =>
        sql<SqlBool>`${value} @> jsonb_build_array(cast(${literal} as ${sql.raw(pgCast[kind])}))`,
    }
  },
}

/** The adapter of one dialect; throws internal for anything but sqlite and postgres. */
export function sqlDialect(kind: DbKind): SqlDialect {
  if (kind === 'sqlite') return sqliteDialect
  if (kind === 'postgres') return postgresDialect
  throw new AppError('internal', `compileFilter: unknown dialect ${JSON.stringify(String(kind))}`)
}
