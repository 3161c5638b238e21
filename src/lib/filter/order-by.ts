import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { DbKind } from '../db/index.js'
import { checkJsonPath, type ResolvedField } from './field-resolver.js'
import { filterError } from './filter-error.js'
import { sqlDialect } from './sql-dialect.js'

/**
 * The expression a list sorts on, with the same ordering the filter comparisons use: text by code point on
 * both dialects, a value inside a JSON column as its text (translatable fields: the locale's string).
 */
export function sortExpression(resolved: ResolvedField, kind: DbKind): RawBuilder<unknown> {
  const dialect = sqlDialect(kind)
  if (resolved.through !== undefined) throw filterError('sortBy', 'sorting through a relation is not supported')
  checkJsonPath(resolved.jsonPath)
  const ref = resolved.unindexed ? dialect.unindexed(sql.ref(resolved.column)) : sql.ref(resolved.column)
  if (resolved.type === 'json') return dialect.byCodePoint(dialect.json(ref, resolved.jsonPath).value('string'))
  return resolved.type === 'text' ? dialect.byCodePoint(ref) : ref
}

/** A sort value bound for comparison with `sortExpression` (booleans as the dialect stores them). */
export function sortParam(
  resolved: ResolvedField,
  kind: DbKind,
  value: string | number | boolean,
): RawBuilder<unknown> {
  const dialect = sqlDialect(kind)
  const valueKind = typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'string'
  const param = dialect.param(valueKind, value)
  return resolved.type === 'text' || resolved.type === 'json' ? dialect.byCodePoint(param) : param
}

export type KeysetDirection = 'asc' | 'desc'

/**
 * The keyset condition "after (value, id)" for a list ordered by (value, id) with nulls smallest: first
 * going up, last going down. That is SQLite's own order, and PostgreSQL's for indexes built NULLS FIRST
 * (collections build theirs so), so either database can walk an index instead of sorting.
 */
export function keysetAfter(
  expression: RawBuilder<unknown>,
  value: RawBuilder<unknown> | null,
  id: string,
  direction: KeysetDirection,
): RawBuilder<SqlBool> {
  const idRef = sql.ref('id')
  if (direction === 'asc') {
    return value === null
      ? sql<SqlBool>`((${expression} is null and ${idRef} > ${id}) or ${expression} is not null)`
      : sql<SqlBool>`(${expression} > ${value} or (${expression} = ${value} and ${idRef} > ${id}))`
  }
  return value === null
    ? sql<SqlBool>`(${expression} is null and ${idRef} < ${id})`
    : sql<SqlBool>`(${expression} < ${value} or (${expression} = ${value} and ${idRef} < ${id}) or ${expression} is null)`
}

/** ORDER BY (value, id) in a direction, nulls smallest. */
export function keysetOrder(expression: RawBuilder<unknown>, direction: KeysetDirection): RawBuilder<unknown> {
  return direction === 'asc'
    ? sql`${expression} asc nulls first, ${sql.ref('id')} asc`
    : sql`${expression} desc nulls last, ${sql.ref('id')} desc`
}
