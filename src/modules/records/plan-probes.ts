import { sql, type CompiledQuery, type Expression, type SqlBool } from 'kysely'
import { runCompiled, type DbHandle } from '../../lib/db/index.js'
import type { RecordStore } from './store.js'

/** How long a probe's answer is trusted: statistics are advice, and a count a minute old still tells the plan. */
const probeTtlMs = 30_000
/** Answers kept per database before the oldest are dropped. */
const maxProbes = 2000

/**
 * Bounded counts the list's plan choice asks for (list-plan.ts): how many live rows match one condition, up
 * to `cap` (the count stops there, so a probe reads at most `cap` index entries), and how many live rows the
 * table has. Answers are cached per database for 30 seconds, keyed by the statement and its values, so a
 * list shape repeated is planned without touching the database.
 */
export function createPlanProbes(now: () => number = Date.now) {
  const cache = new WeakMap<DbHandle, Map<string, { n: number; at: number }>>()

  async function cached(handle: DbHandle, key: string, build: () => CompiledQuery<{ n: number }>): Promise<number> {
    let answers = cache.get(handle)
    if (!answers) cache.set(handle, (answers = new Map()))
    const hit = answers.get(key)
    const at = now()
    if (hit && at - hit.at < probeTtlMs) return hit.n
    const rows = await runCompiled(handle.db, build())
    const n = Number(rows[0]?.n ?? 0)
    if (answers.size >= maxProbes) answers.delete(answers.keys().next().value!)
    answers.delete(key)
    answers.set(key, { n, at })
    return n
  }

  return {
    /**
     * Live rows matching `condition`, counted up to `cap`. `key` names the condition (its filter node and
     * table): building the statement to key it by its text would cost more than the cache saves.
     */
    matching(
      handle: DbHandle,
      store: RecordStore,
      key: string,
      condition: () => Expression<SqlBool>,
      cap: number,
    ): Promise<number> {
      return cached(handle, `m\u0000${cap}\u0000${key}`, () => {
        const inner = store
          .selectFrom()
          .select(sql`1`.as('one'))
          .where(sql<SqlBool>`deleted_at is null`)
          .where(condition())
          .limit(cap)
        return handle.db.selectFrom(inner.as('probe')).select(sql<number>`count(*)`.as('n')).compile()
      })
    },

    /** Live rows of the table: SQLite's statistics for its created_at index when analysed, else counted. */
    async rows(handle: DbHandle, store: RecordStore, table: string, createdAtIndex: string): Promise<number> {
      // The first number of an index's statistics is its rows (live rows: the index is partial).
      const fromStatistics = await cached(handle, `s\u0000${table}`, () =>
        handle.db
          .selectFrom('sqlite_stat1')
          .select(sql<number>`cast(stat as integer)`.as('n'))
          .where('idx', '=', createdAtIndex)
          .compile(),
      ).catch(() => Number.NaN)
      if (Number.isFinite(fromStatistics) && fromStatistics > 0) return fromStatistics
      return cached(handle, `c\u0000${table}`, () =>
        store.selectFrom().select(sql<number>`count(*)`.as('n')).where(sql<SqlBool>`deleted_at is null`).compile(),
      )
    },
  }
}

export type PlanProbes = ReturnType<typeof createPlanProbes>
