import type { Expression, SqlBool } from 'kysely'
import { AppError } from '../errors.js'
import type { FieldPath } from './ast.js'
import { parseFieldPath } from './field-path.js'
import type { FieldValues } from './field-values.js'
import { filterError, quote } from './filter-error.js'

/** How a column stores its values; it decides which comparisons the SQL compiler can emit for it. */
export const columnKinds = ['text', 'integer', 'number', 'boolean', 'json'] as const
export type ColumnKind = (typeof columnKinds)[number]

/** Where a field lives: a checked column, and for a JSON column the keys to walk inside its value. */
export interface ResolvedField {
  /** A column name checked against the schema (`table.column` is allowed); emitted with `sql.ref`. */
  readonly column: string
  /** Keys inside the JSON value; empty for the column itself, and always empty unless `type` is json. */
  readonly jsonPath: readonly string[]
  readonly type: ColumnKind
  /**
   * The values a filter may compare the field with, where the column kind says too little: a date's
   * shape, an enum's choices, the text of a translatable field kept in a JSON column. Absent: those of
   * `type` (a path into JSON takes anything).
   */
  readonly values?: FieldValues
  /**
   * A field reached through relations (`assignee.name`): wraps a condition on `column` in the SQL that
   * finds the related row (an EXISTS built by the resolver, which applies the target's row rules there);
   * `false` when the path leads to no row or field the caller may read, so that every comparison on it is
   * false, as through a null relation. Absent for a field of the filtered table itself.
   */
  readonly through?: ((condition: Expression<SqlBool>) => Expression<SqlBool>) | false
  /**
   * Keep the database's planner from using an index on the column for this condition or sort (SQLite:
   * `+column`; ignored elsewhere). Set by the list's plan choice (records/list-plan.ts), never by a resolver.
   */
  readonly unindexed?: boolean
}

/** Maps a filter's field paths onto a schema; throws invalid_request (or forbidden) for a field a filter may not name. */
export interface FieldResolver {
  resolve(path: FieldPath): ResolvedField
}

const columnName = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
const knownKinds: ReadonlySet<string> = new Set(columnKinds)

/** True when a string names a column kind; throws nothing. */
export function isColumnKind(kind: unknown): kind is ColumnKind {
  return typeof kind === 'string' && knownKinds.has(kind)
}

/**
 * Checks the keys of a JSON path with the parser's own rule for a field segment, so that whatever a
 * resolver returns, a key can be spelled inside a JSON path (`$."key"`) without escaping. Throws invalid_request.
 */
export function checkJsonPath(path: readonly unknown[]): void {
  for (const key of path) {
    // parseFieldPath holds the one rule for a segment; a dot would make several segments of one key.
    if (typeof key !== 'string' || key.includes('.')) {
      throw filterError('filter', `invalid key ${quote(String(key))} in a JSON path`)
    }
    // A BCP-47 locale (`pt-BR`) keys a translatable field's map: letters, digits and hyphens only, so it
    // needs no escaping either.
    if (localeKey.test(key)) continue
    parseFieldPath(key, 'filter')
  }
}

const localeKey = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){1,4}$/

/** A column of `createSchemaResolver`: its kind, or its kind and the values a filter may compare it with. */
export type ColumnSpec = ColumnKind | { readonly type: ColumnKind; readonly values: FieldValues }

/**
 * A resolver over a fixed set of columns: plain columns, and any path into a json column. Refuses unknown
 * fields and paths into non-JSON columns with invalid_request; throws internal for a bad column map.
 */
export function createSchemaResolver(columns: Readonly<Record<string, ColumnSpec>>): FieldResolver {
  const known = new Map<string, { type: ColumnKind; values?: FieldValues }>()
  for (const [name, spec] of Object.entries(columns)) {
    if (!columnName.test(name))
      throw new AppError('internal', `createSchemaResolver: invalid column name ${quote(name)}`)
    const kind: unknown = typeof spec === 'object' && spec !== null ? spec.type : spec
    if (!isColumnKind(kind)) {
      throw new AppError(
        'internal',
        `createSchemaResolver: column ${quote(name)} has unknown kind ${quote(String(kind))}`,
      )
    }
    known.set(name, typeof spec === 'object' ? { type: kind, values: spec.values } : { type: kind })
  }
  return Object.freeze({
    resolve(path: FieldPath): ResolvedField {
      const [column, ...jsonPath] = path
      const name = Array.isArray(path) ? path.map(String).join('.') : String(path)
      const spec = typeof column === 'string' ? known.get(column) : undefined
      if (column === undefined || spec === undefined) throw filterError('filter', `unknown field ${quote(name)}`)
      const { type, values } = spec
      if (jsonPath.length > 0 && type !== 'json') {
        throw filterError('filter', `unknown field ${quote(name)}: ${quote(column)} is not a JSON field`)
      }
      checkJsonPath(jsonPath)
      // Declared values describe the column itself; a path inside JSON has no declared type.
      const declared = values !== undefined && jsonPath.length === 0 ? { values } : {}
      return Object.freeze({ column, jsonPath: Object.freeze(jsonPath), type, ...declared })
    },
  })
}
