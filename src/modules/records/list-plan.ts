import type { Expression, SqlBool } from 'kysely'
import {
  compileFilter,
  type FieldResolver,
  type ResolvedField,
  type ResolvedFilterNode,
} from '../../lib/filter/index.js'
import { createdAtIndexName, indexColumn, layoutOf, type Collection } from '../collections/index.js'
import type { Opened } from './context.js'
import type { PlanProbes } from './plan-probes.js'

/**
 * How a filtered, sorted page is read (decision 082):
 * - `walk`: walk the sort's index in order and test the filter on each row, stopping at the page's end;
 * - `search`: search the filter's index, then sort what it found;
 * - `planner`: no choice to make (or none we can judge): the database's planner decides alone.
 */
export type PlanChoice = 'walk' | 'search' | 'planner'

export interface ListPlan {
  readonly choice: PlanChoice
  /** The rows each plan is expected to read (walk: need ÷ selectivity; search: the filter index's matches). */
  readonly estimate: { readonly rows: number; readonly walk: number; readonly search: number } | null
  /** The resolvers to compile the page's conditions with (`walk`: the filter's indexed columns as `+column`). */
  readonly requestResolver: FieldResolver
  readonly resolver: FieldResolver
  /** `search`: sort on `+column`, so the planner does not walk the sort's index after all. */
  readonly unindexedSort: boolean
  /** `walk`: the full-text condition as `+rowid in (…)`, so it does not drive the read. */
  readonly unindexedSearch: boolean
}

/** What a condition the cost rule cannot measure is taken to keep of the rows (SQLite's own guess for a range). */
const unknownSelectivity = 0.25
/** Probes count up to this many times the break-even count, so a plan is chosen with a margin. */
const probeMargin = 4

const indexedOps: ReadonlySet<string> = new Set(['eq', 'in', 'gt', 'gte', 'lt', 'lte', 'between'])

/** The list as the planner sees it: the sort field, the page's end (offset + limit) and whether it searches. */
export interface PlanInput {
  readonly sortField: ResolvedField
  readonly need: number
  readonly filter: ResolvedFilterNode | null
  /** The full-text search's condition (`+rowid` when `unindexed`) and its text, when the list searches. */
  readonly search: { readonly text: string; readonly condition: (unindexed: boolean) => Expression<SqlBool> } | null
}

/**
 * The cost rule of a filtered, sorted page on SQLite. SQLite's planner reads the filter's index and sorts
 * whenever that index is usable, even when a third of the table matches and walking the sort's index would
 * find the page in a few dozen rows (issue 33: 1.84 ms against 0.09 ms a page). With N live rows, a page
 * ending at row `need`, and M the rows a filter condition on an indexed column matches (probed, see
 * plan-probes.ts), searching reads M rows and sorts them, walking reads about need × N ÷ M (need ÷ the
 * filter's selectivity; several conditions multiply, one the rule cannot measure counts as a quarter). The
 * cheaper is chosen and SQLite is steered to it with `+column`, the form its documentation gives for
 * keeping an index out of consideration. Break-even is M = √(need × N); probes count up to four times that,
 * so a probe reads at most 4√(need × N) index entries (2,000 at 10,000 rows and a 25-row page) and a capped
 * count errs towards searching. A full-text search counts as one more indexed condition (its index finds
 * rows by rowid). PostgreSQL weighs LIMIT in its own costs and is left to its planner, as are kv tables and
 * a compound index that serves the filter and the sort at once.
 */
export async function planList(open: Opened, input: PlanInput, probes: PlanProbes): Promise<ListPlan> {
  const planner = plannerPlan(open)
  const { sortField } = input
  if (open.handle.kind !== 'sqlite' || layoutOf(open.collection) !== 'columns') return planner
  if (sortField.through !== undefined || sortField.jsonPath.length > 0 || sortField.type === 'json') return planner
  const indexes = indexesOf(open.collection)
  if (!indexes.some((columns) => columns[0] === sortField.column)) return planner

  const leading = new Set(indexes.map((columns) => columns[0]))
  const indexed: Term[] = []
  let unknown = 0
  for (const term of termsOf(open, input.filter)) {
    if (term.column === sortField.column) continue // the walk reads a range of the sort's index itself
    if (term.column !== null && leading.has(term.column)) indexed.push(term)
    else unknown++
  }
  if (indexed.length === 0 && !input.search) return planner
  const equal = new Set(indexed.filter((t) => t.equality).map((t) => t.column!))
  if (servesBoth(indexes, equal, sortField.column)) return planner

  const table = open.collection.name
  const rows = await probes.rows(open.handle, open.store, table, createdAtIndexName(table))
  if (rows === 0) return planner
  const cap = Math.ceil(probeMargin * Math.sqrt(input.need * rows))
  let search = Number.POSITIVE_INFINITY
  let selectivity = unknownSelectivity ** unknown
  for (const term of indexed) {
    const key = `${table}\u0000${JSON.stringify(term.node)}`
    const condition = () => compileFilter(term.node, term.resolver, open.handle.kind)
    const matching = await probes.matching(open.handle, open.store, key, condition, cap)
    search = Math.min(search, matching)
    selectivity *= Math.max(matching, 1) / rows
  }
  // A search finds its rows through the full-text index (rowid in …): measured like an indexed condition.
  if (input.search) {
    const { text, condition } = input.search
    const matching = await probes.matching(
      open.handle,
      open.store,
      `${table}\u0000search\u0000${text}`,
      () => condition(false),
      cap,
    )
    search = Math.min(search, matching)
    selectivity *= Math.max(matching, 1) / rows
  }
  const walk = Math.min(rows, input.need / selectivity)
  const estimate = { rows, walk: Math.round(walk), search }
  if (walk < search) {
    const steered = new Set(indexed.map((t) => t.column!))
    return {
      choice: 'walk',
      estimate,
      requestResolver: unindexing(open.requestResolver, steered),
      resolver: unindexing(open.resolver, steered),
      unindexedSort: false,
      unindexedSearch: input.search !== null,
    }
  }
  return { ...planner, choice: 'search', estimate, unindexedSort: true }
}

/** No steering: the database's planner decides alone. */
export function plannerPlan(open: Opened): ListPlan {
  return {
    choice: 'planner',
    estimate: null,
    requestResolver: open.requestResolver,
    resolver: open.resolver,
    unindexedSort: false,
    unindexedSearch: false,
  }
}

/** The columns of each index of a column table, in order: created_at's, each indexed or unique field's, compound ones. */
export function indexesOf(collection: Collection): string[][] {
  const indexes: string[][] = [['created_at'], ['id']]
  for (const def of collection.fields) if (def.indexed || def.unique) indexes.push([def.name])
  for (const index of collection.indexes) indexes.push(index.fields.map((spec) => indexColumn(spec).field))
  return indexes
}

/** True when an index holds some equality-tested columns and then the sort's column: it serves both. */
export function servesBoth(indexes: readonly string[][], equal: ReadonlySet<string>, sort: string): boolean {
  return indexes.some((columns) => {
    const at = columns.indexOf(sort)
    return at > 0 && columns.slice(0, at).every((c) => equal.has(c))
  })
}

/** A top-level condition of a list: the grants' row rule's and the request filter's, ANDed. */
export interface Term {
  readonly node: ResolvedFilterNode
  readonly resolver: FieldResolver
  /** The plain column an index could serve it on; null for an OR, a path, JSON or an operator no index serves. */
  readonly column: string | null
  /** An equality (eq, in): a compound index serves it before the sort's column. */
  readonly equality: boolean
}

/** The top-level conditions of a list (each with the resolver it is compiled with). */
export function termsOf(open: Opened, filter: ResolvedFilterNode | null): Term[] {
  const nodes = [
    ...conjuncts(open.scope.rows).map((node) => ({ node, resolver: open.resolver })),
    ...conjuncts(filter).map((node) => ({ node, resolver: open.requestResolver })),
  ]
  return nodes.map(({ node, resolver }) => {
    const column = indexedColumnOf(node, resolver)
    const equality = column !== null && node.kind === 'compare' && (node.op === 'eq' || node.op === 'in')
    return { node, resolver, column, equality }
  })
}

function conjuncts(node: ResolvedFilterNode | null): ResolvedFilterNode[] {
  if (!node) return []
  return node.kind === 'and' ? node.items.flatMap(conjuncts) : [node]
}

/** The column an index could serve this condition on, or null (an OR, a path, JSON, an operator no index serves). */
function indexedColumnOf(node: ResolvedFilterNode, resolver: FieldResolver): string | null {
  if (node.kind !== 'compare' || !indexedOps.has(node.op)) return null
  if (node.op === 'eq' && 'value' in node && node.value.value === null) return null
  const resolved = resolver.resolve(node.field)
  if (resolved.through !== undefined || resolved.jsonPath.length > 0 || resolved.type === 'json') return null
  return resolved.column
}

/** A resolver whose answers for these columns are marked `unindexed`. */
function unindexing(resolver: FieldResolver, columns: ReadonlySet<string>): FieldResolver {
  return {
    resolve(path) {
      const resolved = resolver.resolve(path)
      return columns.has(resolved.column) && resolved.through === undefined
        ? { ...resolved, unindexed: true }
        : resolved
    },
  }
}
