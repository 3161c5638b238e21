import { sql, type Expression, type SqlBool } from 'kysely'
import { AppError } from '../../lib/errors.js'
import { compileFilter, keysetOrder, sortExpression, type ResolvedFilterNode } from '../../lib/filter/index.js'
import type { Opened } from './context.js'
import type { Row } from './store.js'

/** One sort key of a query: a field the caller may read, up or down. */
export interface SortKey {
  readonly field: string
  readonly order: 'asc' | 'desc'
}

/** A read of rows by filter, several sort keys, offset and limit (flows' crud_read; the list API pages instead). */
export interface FindQuery {
  /** JSON text of a filter, either format (as the list's `filter`). */
  readonly filter?: string
  readonly sort?: readonly SortKey[]
  readonly limit: number
  readonly offset: number
  /** The fields to answer (system columns always); all readable ones when absent. */
  readonly fields?: readonly string[]
}

/** The most sort keys one query takes. */
export const maxSortKeys = 10

/**
 * Rows of the caller's read scope matching the filter, ordered by the sort keys (then by id, so the order
 * is total), `limit + 1` of them so the caller can tell whether more follow. Throws invalid_request,
 * forbidden (a sort field outside the caller's allowlist).
 */
export async function findRows(opened: Opened, filter: ResolvedFilterNode | null, query: FindQuery): Promise<Row[]> {
  const { store, requestResolver, handle } = opened
  if ((query.sort?.length ?? 0) > maxSortKeys)
    throw new AppError('invalid_request', `sort: at most ${maxSortKeys} keys`)
  let select = store.selectFrom().selectAll()
  for (const condition of conditionsOf(opened, filter)) select = select.where(condition)
  const sort = query.sort && query.sort.length > 0 ? query.sort : [{ field: 'created_at', order: 'desc' as const }]
  const orders = sort.map(({ field, order }) => {
    const resolved = requestResolver.resolve(field.split('.') as [string, ...string[]])
    const expression = sortExpression(resolved, handle.kind)
    // Nulls smallest, as the list orders them, on both dialects.
    return order === 'asc' ? sql`${expression} asc nulls first` : sql`${expression} desc nulls last`
  })
  const last = sort[sort.length - 1]!
  const ordered = sql.join([...orders, sql`${sql.ref('id')} ${sql.raw(last.order)}`])
  return select
    .orderBy(ordered)
    .offset(query.offset)
    .limit(query.limit + 1)
    .execute()
}

/**
 * The ids of rows the caller may both read and act on (`acting`: opened for update or delete) that are
 * among `ids` (when given) and match the filter (checked against what the caller may read), at most `max`.
 * Throws invalid_request when more than `max` match: a write by filter is refused whole rather than cut short.
 */
export async function matchingIds(
  reading: Opened,
  acting: Opened,
  filter: ResolvedFilterNode | null,
  ids: readonly string[] | null,
  max: number,
): Promise<string[]> {
  let select = acting.store.selectFrom().select('id')
  for (const condition of [...conditionsOf(reading, filter), ...acting.store.where(acting.scope.rows, false)])
    select = select.where(condition)
  if (ids) select = select.where('id', 'in', [...new Set(ids)])
  const rows = await select
    .orderBy(
      keysetOrder(sortExpression({ column: 'created_at', jsonPath: [], type: 'integer' }, acting.handle.kind), 'asc'),
    )
    .limit(max + 1)
    .execute()
  if (rows.length > max)
    throw new AppError('invalid_request', `More than ${max} records match; narrow the filter`, { max })
  return rows.map((row) => String(row.id))
}

/** The WHERE of a read: live rows of the caller's row scope, and the request's filter. */
export function conditionsOf(opened: Opened, filter: ResolvedFilterNode | null): Expression<SqlBool>[] {
  const conditions = [...opened.store.where(opened.scope.rows, false)]
  if (filter) conditions.push(compileFilter(filter, opened.requestResolver, opened.handle.kind))
  return conditions
}
