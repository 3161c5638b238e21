import { sql, type RawBuilder } from 'kysely'
import { AppError } from '../../lib/errors.js'
import { sortExpression, type ResolvedFilterNode, type ResolvedField } from '../../lib/filter/index.js'
import { fieldTypeOf, type FieldDef } from '../collections/index.js'
import { readValue } from './codec.js'
import type { Opened } from './context.js'
import { conditionsOf, type SortKey } from './query.js'

export const aggregateFunctions = ['count', 'sum', 'avg', 'min', 'max'] as const
export type AggregateFunction = (typeof aggregateFunctions)[number]

/** One value computed per group: `fn` over `field` (count without a field counts rows), answered under `as`. */
export interface AggregateSpec {
  readonly fn: AggregateFunction
  readonly field?: string
  /** The key of the value in each result row; default `count` (rows), else `<fn>_<field>`. */
  readonly as?: string
}

export interface AggregateQuery {
  /** JSON text of a filter, either format (as the list's `filter`). */
  readonly filter?: string
  readonly groupBy?: readonly string[]
  /** What to compute; `[{ fn: 'count' }]` when absent or empty. */
  readonly aggregate?: readonly AggregateSpec[]
  /** Group fields or result keys; by the group fields, ascending, when absent. */
  readonly sort?: readonly SortKey[]
  readonly limit: number
}

/** One row per group: the group's field values under their names, the computed values under their keys. */
export type AggregateRow = Record<string, unknown>

export const aggregateLimits = { groupBy: 5, aggregate: 20, limit: 10_000 } as const

const keyPattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/** A computed column: what it selects, how its value is read back. */
interface Column {
  readonly key: string
  readonly expression: RawBuilder<unknown>
  /** The expression to order by. */
  readonly order: RawBuilder<unknown>
  read(raw: unknown): unknown
}

/**
 * GROUP BY and aggregate functions compiled to one SELECT over the caller's read scope (the rows a list
 * would show), with the request's filter. Every field named must be one the caller may read and filter on
 * (403 otherwise, as a list's filter); groups are plain columns (not JSON, not computed); sum and avg take
 * number fields, min and max number, text, date and datetime fields. Answers at most `limit` rows and
 * whether more groups follow. Throws invalid_request, forbidden.
 */
export async function aggregateRows(
  opened: Opened,
  filter: ResolvedFilterNode | null,
  query: AggregateQuery,
): Promise<{ rows: AggregateRow[]; hasMore: boolean }> {
  const groupBy = query.groupBy ?? []
  const specs = query.aggregate && query.aggregate.length > 0 ? query.aggregate : [{ fn: 'count' as const }]
  if (groupBy.length > aggregateLimits.groupBy) throw invalid(`groupBy: at most ${aggregateLimits.groupBy} fields`)
  if (specs.length > aggregateLimits.aggregate)
    throw invalid(`aggregate: at most ${aggregateLimits.aggregate} functions`)
  if (new Set(groupBy).size !== groupBy.length) throw invalid('groupBy: a field is named twice')

  const groups = groupBy.map((name) => groupColumn(opened, name))
  const values = specs.map((spec) => valueColumn(opened, spec))
  const columns = [...groups, ...values]
  const seen = new Set<string>()
  for (const column of columns) {
    if (seen.has(column.key)) throw invalid(`"${column.key}" names two columns of the result; give one an \`as\``)
    seen.add(column.key)
  }
  const byKey = new Map(columns.map((c) => [c.key, c]))

  const sort =
    query.sort && query.sort.length > 0 ? query.sort : groups.map((g) => ({ field: g.key, order: 'asc' as const }))
  const orders = sort.map(({ field, order }) => {
    const column = byKey.get(field)
    if (!column) throw invalid(`sort: "${field.slice(0, 100)}" is neither a groupBy field nor a result key`)
    return order === 'asc' ? sql`${column.order} asc nulls first` : sql`${column.order} desc nulls last`
  })

  let select = opened.store.selectFrom().select(columns.map((c) => c.expression.as(c.key)))
  for (const condition of conditionsOf(opened, filter)) select = select.where(condition)
  if (groups.length > 0) select = select.groupBy(groups.map((g) => g.expression))
  if (orders.length > 0) select = select.orderBy(sql.join(orders))
  const raw = (await select.limit(query.limit + 1).execute()) as Record<string, unknown>[]
  const rows = raw
    .slice(0, query.limit)
    .map((row) => Object.fromEntries(columns.map((c) => [c.key, c.read(row[c.key])])))
  return { rows, hasMore: raw.length > query.limit }
}

function invalid(message: string): AppError {
  return new AppError('invalid_request', message)
}

/** A field the caller may read and filter on, resolved to its column, with its definition (null for a system column). */
function fieldOf(opened: Opened, name: string, what: string): { resolved: ResolvedField; def: FieldDef | null } {
  if (typeof name !== 'string' || !keyPattern.test(name))
    throw invalid(`${what}: "${String(name).slice(0, 100)}" is not a field name`)
  // The request resolver refuses unknown fields (400), computed ones (400), and fields outside the caller's allowlist (403).
  const resolved = opened.requestResolver.resolve([name])
  return { resolved, def: opened.shape.byName.get(name) ?? null }
}

function groupColumn(opened: Opened, name: string): Column {
  const { resolved, def } = fieldOf(opened, name, 'groupBy')
  if (resolved.type === 'json' || resolved.jsonPath.length > 0)
    throw invalid(`groupBy: ${name} holds JSON; group by a plain field`)
  const kind = opened.handle.kind
  return {
    key: name,
    expression: sql.ref(resolved.column),
    order: sortExpression(resolved, kind),
    read: (raw) => (def ? readValue(def, raw, kind) : numberIfNumeric(raw, resolved.type)),
  }
}

function valueColumn(opened: Opened, spec: AggregateSpec): Column {
  if (!(aggregateFunctions as readonly string[]).includes(spec.fn))
    throw invalid(`aggregate: "${String(spec.fn).slice(0, 20)}" is not one of ${aggregateFunctions.join(', ')}`)
  const key = spec.as ?? (spec.field === undefined ? spec.fn : `${spec.fn}_${spec.field}`)
  if (!keyPattern.test(key))
    throw invalid(`aggregate: "${key.slice(0, 100)}" is not a valid result key (letters, digits, _; at most 64)`)
  if (spec.field === undefined) {
    if (spec.fn !== 'count') throw invalid(`aggregate: ${spec.fn} needs a field`)
    const expression = sql`count(*)`
    return { key, expression, order: expression, read: toNumber }
  }
  const { resolved, def } = fieldOf(opened, spec.field, 'aggregate')
  const ref = sql.ref(resolved.column)
  const kind = opened.handle.kind
  if (spec.fn === 'count') {
    const expression = sql`count(${ref})`
    return { key, expression, order: expression, read: toNumber }
  }
  const numeric = resolved.type === 'integer' || resolved.type === 'number'
  const isDate = def !== null && (def.type === 'date' || def.type === 'datetime')
  if ((spec.fn === 'sum' || spec.fn === 'avg') && (!numeric || isDate))
    throw invalid(`aggregate: ${spec.fn} takes a number field; ${spec.field} is not one`)
  if ((spec.fn === 'min' || spec.fn === 'max') && !(numeric || resolved.type === 'text'))
    throw invalid(`aggregate: ${spec.fn} takes a number, text, date or datetime field; ${spec.field} is not one`)
  if (def && fieldTypeOf(def.type).computed) throw invalid(`aggregate: ${spec.field} is computed`)
  // Text compares by code point, as the list sorts it, on both dialects.
  const operand = resolved.type === 'text' ? sortExpression(resolved, kind) : ref
  const expression = sql`${sql.raw(spec.fn)}(${operand})`
  const read =
    spec.fn === 'sum' || spec.fn === 'avg'
      ? (raw: unknown) => (raw === null || raw === undefined ? null : toNumber(raw))
      : (raw: unknown) => (def ? readValue(def, raw, kind) : numberIfNumeric(raw, resolved.type))
  return { key, expression, order: expression, read }
}

/** Counts and sums arrive as bigint or numeric text on PostgreSQL. */
function toNumber(raw: unknown): number {
  return typeof raw === 'number' ? raw : Number(raw)
}

function numberIfNumeric(raw: unknown, type: ResolvedField['type']): unknown {
  if (raw === null || raw === undefined) return null
  return type === 'integer' || type === 'number' ? toNumber(raw) : raw
}
