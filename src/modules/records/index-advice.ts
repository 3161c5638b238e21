import { CompiledQuery } from 'kysely'
import type { DbHandle } from '../../lib/db/index.js'
import type { Logger } from '../../lib/log.js'
import type { Collection } from '../collections/index.js'
import type { Opened } from './context.js'
import { indexesOf, servesBoth, termsOf, type ListPlan, type PlanChoice } from './list-plan.js'
import { explainSummary, isSlowPlan } from './plan-explain.js'
import type { ResolvedFilterNode } from '../../lib/filter/index.js'

/** Shapes kept per collection, and collections tracked, before the least seen are dropped. */
const limits = { shapes: 64, collections: 500 } as const

/** A list query's shape: which fields it tests how, its sort and whether it searches; never a value. */
export interface ListShape {
  readonly filter: { field: string; op: string }[]
  readonly sortBy: string
  readonly search: boolean
}

export interface ShapeAdvice {
  readonly shape: ListShape
  /** How the page was read: the plan choice (decision 082) and the database's plan, taken the first time. */
  readonly choice: PlanChoice
  readonly plan: string | null
  /** Reads far more rows than it returns, or sorts what it found: an index would serve it better. */
  readonly slow: boolean
  readonly seen: number
  /** Mean time of the page's statement, milliseconds. */
  readonly meanMs: number
  readonly estimate: ListPlan['estimate']
  /** The compound index that would serve the shape (one PATCH of the collection's `indexes`), null when none would help. */
  readonly index: { fields: string[] } | null
  readonly firstSeen: number
  readonly lastSeen: number
}

interface Entry {
  shape: ListShape
  choice: PlanChoice
  plan: string | null
  slow: boolean
  seen: number
  totalMs: number
  estimate: ListPlan['estimate']
  index: { fields: string[] } | null
  firstSeen: number
  lastSeen: number
}

/** What a list tells the advisor after its page was read. */
export interface ListObservation {
  readonly filter: ResolvedFilterNode | null
  readonly sort: { readonly field: string; readonly direction: 'asc' | 'desc' }
  readonly searching: boolean
  readonly plan: ListPlan
  readonly limit: number
  readonly query: CompiledQuery
  readonly ms: number
}

/**
 * The index advisor (issue 33): each list records its shape; the first list of a shape has its plan taken
 * (SQLite: EXPLAIN QUERY PLAN, PostgreSQL: EXPLAIN, values never kept) and judged; every list adds to the
 * shape's count and time. Kept in memory per instance: advice, not data (decision 082).
 */
export function createIndexAdvisor(deps: { log: Logger; now: () => number }) {
  // By collection; a schema change (an index made, a field changed) starts its shapes afresh: their plans changed.
  const byCollection = new Map<string, { version: number; entries: Map<string, Entry> }>()

  function entriesOf(collection: Collection): Map<string, Entry> {
    const key = `${collection.projectId}/${collection.id}`
    const known = byCollection.get(key)
    if (known && known.version === collection.schemaVersion) return known.entries
    if (!known && byCollection.size >= limits.collections) byCollection.delete(byCollection.keys().next().value!)
    const entries = new Map<string, Entry>()
    byCollection.set(key, { version: collection.schemaVersion, entries })
    return entries
  }

  return {
    /** Records one list. Never throws and never delays the answer: the first sight's EXPLAIN runs after it. */
    observe(open: Opened, seen: ListObservation): void {
      const terms = termsOf(open, seen.filter)
      const filter = terms.map((t) => ({ field: fieldOf(t.node), op: opOf(t.node) }))
      const sortBy = `${seen.sort.direction === 'desc' ? '-' : ''}${seen.sort.field}`
      const shape: ListShape = { filter, sortBy, search: seen.searching }
      const entries = entriesOf(open.collection)
      const key = `${JSON.stringify(shape)}\u0000${seen.plan.choice}`
      const at = deps.now()
      const known = entries.get(key)
      if (known) {
        known.seen++
        known.totalMs += seen.ms
        known.lastSeen = at
        known.estimate = seen.plan.estimate ?? known.estimate
        return
      }
      if (entries.size >= limits.shapes) {
        const least = [...entries].reduce((a, b) => (b[1].seen < a[1].seen ? b : a))
        entries.delete(least[0])
      }
      const equal = terms.filter((t) => t.equality && t.column !== null).map((t) => t.column!)
      const fields = [...new Set(equal.filter((c) => c !== seen.sort.field)), sortBy]
      const indexes = indexesOf(open.collection)
      const served =
        fields.length < 2
          ? indexes.some((columns) => columns[0] === seen.sort.field)
          : servesBoth(indexes, new Set(equal), seen.sort.field)
      const entry: Entry = {
        shape,
        choice: seen.plan.choice,
        plan: null,
        slow: false,
        seen: 1,
        totalMs: seen.ms,
        estimate: seen.plan.estimate,
        index: served || seen.searching ? null : { fields },
        firstSeen: at,
        lastSeen: at,
      }
      entries.set(key, entry)
      void explain(open.handle, seen.query)
        .then((plan) => {
          entry.plan = explainSummary(open.handle.kind, plan)
          entry.slow = isSlowPlan(open.handle.kind, plan) || (seen.plan.estimate?.walk ?? 0) > 10 * seen.limit
        })
        .catch((err: unknown) =>
          deps.log.warn({ err, collection: open.collection.name }, 'index advisor: EXPLAIN failed'),
        )
    },

    /** Every shape seen of the collection: the slow first, then by total time. */
    shapes(collection: Collection): ShapeAdvice[] {
      const entries = [...entriesOf(collection).values()]
      return entries
        .map(({ totalMs, ...entry }) => ({
          ...entry,
          index: entry.slow ? entry.index : null,
          meanMs: totalMs / entry.seen,
        }))
        .sort((a, b) => Number(b.slow) - Number(a.slow) || b.meanMs * b.seen - a.meanMs * a.seen)
    },
  }
}

export type IndexAdvisor = ReturnType<typeof createIndexAdvisor>

async function explain(handle: DbHandle, query: CompiledQuery): Promise<unknown[]> {
  const prefix = handle.kind === 'sqlite' ? 'explain query plan ' : 'explain (format json) '
  const result = await handle.db.executeQuery(CompiledQuery.raw(prefix + query.sql, [...query.parameters]))
  return result.rows as unknown[]
}

function fieldOf(node: ResolvedFilterNode): string {
  return node.kind === 'compare' ? node.field.join('.') : `(${node.kind})`
}

function opOf(node: ResolvedFilterNode): string {
  return node.kind === 'compare' ? node.op : node.kind
}
