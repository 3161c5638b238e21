import { sql } from 'kysely'
import { tableIdentifier, type DbHandle } from './handle.js'

/**
 * Planner statistics: `ANALYZE` of the one table. SQLite reads at most `analysis_limit` rows per index (set
 * when the database opens), so it stays cheap on large tables; PostgreSQL samples at most 300 ×
 * default_statistics_target rows. (`PRAGMA optimize` was used before: it decides for itself and left
 * sqlite_stat1 saying 1,000 rows after 10,000 were imported, so the planner chose the wrong index, issue 33.)
 */
export async function refreshStatistics(handle: DbHandle, table: string): Promise<void> {
  await sql`analyze ${tableIdentifier(handle, table)}`.execute(handle.db)
}

/** Rows written to a table since its statistics were last refreshed, before they are refreshed again. */
const minimumRows = 1000

/** The share of the rows written before the last refresh that the rows written since must reach (issue 33). */
const refreshFraction = 0.25

/**
 * Refreshes a table's statistics after bulk writes, not after each one: once the rows written since the
 * last refresh reach 1,000 and a quarter of the rows written before it, so the statistics are never more
 * than about 25% behind the rows this process wrote, and a million-row import in 1,000-row chunks refreshes
 * some thirty times (each a bounded ANALYZE), not a thousand.
 */
export function createStatisticsPacer(refresh: (handle: DbHandle, table: string) => Promise<void> = refreshStatistics) {
  // By handle (one per project database or binding, kept open by the registry), then by table.
  const written = new WeakMap<DbHandle, Map<string, { since: number; before: number }>>()
  return {
    /** Counts `rows` written to `table` and refreshes its statistics when they are due. Never throws: statistics are advice. */
    async wrote(handle: DbHandle, table: string, rows: number, onError: (err: unknown) => void): Promise<void> {
      if (rows <= 0) return
      let tables = written.get(handle)
      if (!tables) written.set(handle, (tables = new Map()))
      const entry = tables.get(table) ?? { since: 0, before: 0 }
      entry.since += rows
      tables.set(table, entry)
      if (entry.since < Math.max(minimumRows, entry.before * refreshFraction)) return
      entry.before += entry.since
      entry.since = 0
      await refresh(handle, table).catch(onError)
    },
  }
}

export type StatisticsPacer = ReturnType<typeof createStatisticsPacer>
