import { sql, type CompiledQuery, type Expression, type SqlBool } from 'kysely'
import { runCompiled } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import {
  andNode,
  checkFilter,
  compileFilter,
  keysetAfter,
  keysetOrder,
  parseFilter,
  resolveVariables,
  sortExpression,
  sortParam,
  type ColumnKind,
  type FilterNode,
  type ResolvedFilterNode,
} from '../../lib/filter/index.js'
import { layoutOf, searchableFields, searchCondition } from '../collections/index.js'
import { readValue } from './codec.js'
import type { Opened } from './context.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import { withFieldValues } from './filter-values.js'
import type { ListObservation } from './index-advice.js'
import { planList, plannerPlan, type ListPlan } from './list-plan.js'
import type { PlanProbes } from './plan-probes.js'
import type { Row } from './store.js'

export interface ListParams {
  page: number
  limit: number
  sortBy?: string
  order?: 'asc' | 'desc'
  filter?: string
  search?: string
  /** Present (even empty) switches to keyset mode. */
  cursor?: string
  includeDeleted: boolean
}

export interface ListPage {
  rows: Row[]
  total: number
  hasMore: boolean
  cursors?: { next: string | null; previous: string | null }
}

/**
 * The filter of a list, parsed (either format), checked against the fields the caller may read (values of
 * the wrong kind refused, comma-separated lists converted) and with the caller's variables resolved.
 * Throws invalid_request, forbidden (a field outside the caller's allowlist).
 */
export function requestFilter(open: Opened, raw: string | undefined, now: number): ResolvedFilterNode | null {
  if (raw === undefined || raw === '') return null
  const node: FilterNode = checkFilter(parseFilter(raw), withFieldValues(open.requestResolver, open.collection.fields))
  const p = open.principal
  return resolveVariables(node, { userId: p.userId, role: p.roleName, projectId: p.projectId, now })
}

/** Sort column and direction: `sortBy` (a leading `-` means descending and wins over `order`). */
function sortOf(params: ListParams): { field: string; direction: 'asc' | 'desc' } {
  const raw = params.sortBy || 'created_at'
  if (raw.startsWith('-')) return { field: raw.slice(1), direction: 'desc' }
  return { field: raw, direction: params.order ?? 'desc' }
}

/** How a page-mode total is had: `load` counts; the caller may answer from its cache instead (freshness.ts). */
export type CountTotal = (load: () => Promise<number>) => Promise<number>

/** What a list is read with besides its request: all optional. */
export interface ListOptions {
  /** How the page-mode total is had (default: counted). */
  count?: CountTotal
  /** Bounded counts for the plan choice (list-plan.ts); without them the database's planner decides alone. */
  probes?: PlanProbes
  /** Told about the page's statement once it ran (the index advisor). */
  observe?: (seen: ListObservation) => void
}

const countDirectly: CountTotal = (load) => load()

/**
 * One page of a collection: the caller's row scope, the request's filter and search, sorted; counted in
 * page mode, keyset-paged (never counted, total -1) in cursor mode. Every row appears exactly once across
 * cursor pages even while rows are inserted, since each page starts strictly after the last one's key.
 */
export async function listRows(
  open: Opened,
  params: ListParams,
  filter: ResolvedFilterNode | null,
  options: ListOptions = {},
): Promise<ListPage> {
  const { count = countDirectly, probes, observe } = options
  const { store, handle, requestResolver, collection, shape } = open
  const sort = sortOf(params)
  const sortField = requestResolver.resolve(sort.field.split('.') as [string, ...string[]])
  if (sortField.type === 'json' && !shape.byName.get(sort.field)?.translatable) {
    throw new AppError('invalid_request', `sortBy: ${sort.field} is a JSON field; sort on a scalar field`)
  }
  const searching = params.search !== undefined && params.search !== ''
  let search: { text: string; condition: (unindexed: boolean) => Expression<SqlBool> } | null = null
  if (searching) {
    // The search index spans every text field: searching it would probe fields the caller may not read.
    const hidden = open.scope.fields
      ? searchableFields(shape.collection.fields).filter((f) => !open.scope.fields!.includes(f.name))
      : []
    if (hidden.length > 0)
      throw new AppError('forbidden', `search covers ${hidden.map((f) => f.name).join(', ')}, which you may not read`)
    const text = params.search!
    const condition = (unindexed: boolean) =>
      searchCondition(handle, collection.name, shape.collection.fields, text, layoutOf(collection), unindexed)
    condition(false) // refuses a collection without text fields, or a search without words, before planning
    search = { text, condition }
  }
  const need = params.cursor === undefined ? params.page * params.limit : params.limit + 1
  const plan: ListPlan = probes ? await planList(open, { sortField, need, filter, search }, probes) : plannerPlan(open)
  const sortExpr = sortExpression(plan.unindexedSort ? { ...sortField, unindexed: true } : sortField, handle.kind)

  // The page's conditions are compiled as the plan steers; the count's as they are (it has no sort to walk).
  const conditions = [...store.where(open.scope.rows, params.includeDeleted, plan.resolver)]
  const counted = plan.choice === 'walk' ? [...store.where(open.scope.rows, params.includeDeleted)] : conditions
  if (filter) {
    conditions.push(compileFilter(filter, plan.requestResolver, handle.kind))
    if (counted !== conditions) counted.push(compileFilter(filter, requestResolver, handle.kind))
  }
  if (search) {
    conditions.push(search.condition(plan.unindexedSearch))
    if (counted !== conditions) counted.push(search.condition(false))
  }

  const base = () => {
    let query = store.selectFrom().selectAll()
    for (const c of conditions) query = query.where(c)
    return query
  }
  // The page's statement, timed and shown to the index advisor (index-advice.ts).
  const read = async (query: CompiledQuery<Row>): Promise<Row[]> => {
    const started = performance.now()
    // On SQLite straight on the connection (runCompiled): Kysely's executor costs as much as a small page's read.
    const rows = await runCompiled<Row>(handle.db, query)
    const ms = performance.now() - started
    observe?.({ filter, sort, searching, plan, limit: params.limit, query, ms })
    return rows
  }

  if (params.cursor === undefined) {
    const rows = await read(
      base()
        .orderBy(keysetOrder(sortExpr, sort.direction))
        .offset((params.page - 1) * params.limit)
        .limit(params.limit)
        .compile(),
    )
    const offset = (params.page - 1) * params.limit
    // A short page that is not past the end ends the list: the total is known without counting.
    if (rows.length < params.limit && (rows.length > 0 || params.page === 1)) {
      return { rows, total: offset + rows.length, hasMore: false }
    }
    const total = await count(async () => {
      let countQuery = store.selectFrom().select(sql<number>`count(*)`.as('n'))
      for (const c of counted) countQuery = countQuery.where(c)
      return Number((await countQuery.executeTakeFirstOrThrow()).n)
    })
    return { rows, total, hasMore: params.page * params.limit < total }
  }

  const sortKey = `${sort.field}:${sort.direction}`
  const position = params.cursor === '' ? null : decodeCursor(params.cursor, sortKey)
  // A position whose value is not of the sort field's kind was not made by this list (and would be bound
  // against the column as another type: a database error on PostgreSQL, a wrong page on SQLite).
  if (position && position.value !== null && typeof position.value !== jsKindOf(sortField.type)) {
    throw new AppError('invalid_request', 'cursor is not a cursor of this list; start again with cursor=')
  }
  // A "previous" page walks the other way from its cursor, then is turned around.
  const backwards = position?.direction === 'previous'
  const walk = backwards ? (sort.direction === 'asc' ? 'desc' : 'asc') : sort.direction
  let query = base()
  if (position) {
    const value = position.value === null ? null : sortParam(sortField, handle.kind, position.value)
    query = query.where(keysetAfter(sortExpr, value, position.id, walk))
  }
  const fetched = await read(
    query
      .orderBy(keysetOrder(sortExpr, walk))
      .limit(params.limit + 1)
      .compile(),
  )
  const more = fetched.length > params.limit
  const rows = fetched.slice(0, params.limit)
  if (backwards) rows.reverse()
  const first = rows[0]
  const last = rows[rows.length - 1]
  // The cursor holds the API value: a driver may hand a column back as something else (PostgreSQL numeric
  // arrives as a string, which would then be bound as text against a numeric column).
  const sortDef = shape.byName.get(sort.field)
  const valueOf = (row: Row): string | number | boolean | null => {
    const raw = row[sortField.column]
    if (sortField.type === 'json') return jsonSortValue(raw, sortField.jsonPath)
    return (sortDef ? readValue(sortDef, raw, shape.kind) : (raw ?? null)) as string | number | boolean | null
  }
  const hasNext = backwards ? position !== null : more
  const hasPrevious = backwards ? more : position !== null
  return {
    rows,
    total: -1,
    hasMore: hasNext,
    cursors: {
      next:
        hasNext && last
          ? encodeCursor({ sort: sortKey, direction: 'next', value: valueOf(last), id: String(last.id) })
          : null,
      previous:
        hasPrevious && first
          ? encodeCursor({ sort: sortKey, direction: 'previous', value: valueOf(first), id: String(first.id) })
          : null,
    },
  }
}

/** The JavaScript type of a cursor value for a sort column of this kind. */
function jsKindOf(kind: ColumnKind): 'string' | 'number' | 'boolean' {
  if (kind === 'integer' || kind === 'number') return 'number'
  return kind === 'boolean' ? 'boolean' : 'string'
}

/** The sort value of a translatable field in a raw row (a locale's string, or null). */
function jsonSortValue(raw: unknown, path: readonly string[]): string | null {
  let value: unknown = typeof raw === 'string' ? safeParse(raw) : raw
  for (const key of path)
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined
  return typeof value === 'string' ? value : null
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/** A filter narrowing a scope (both optional). */
export function both(a: ResolvedFilterNode | null, b: ResolvedFilterNode | null): ResolvedFilterNode | null {
  if (!a) return b
  if (!b) return a
  return andNode([a, b])
}
