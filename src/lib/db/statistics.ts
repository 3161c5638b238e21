import { sql } from 'kysely'
import { tableIdentifier, type DbHandle } from './handle.js'

/**
 * Planner statistics. SQLite: `PRAGMA optimize`, which itself decides which tables need a new ANALYZE
 * (bounded by the `analysis_limit` set when the database opens, so it stays cheap on large tables).
 * PostgreSQL: `ANALYZE` of the one table (a sample of at most 300 × default_statistics_target rows).
 */
export async function refreshStatistics(handle: DbHandle, table: string): Promise<void> {
  if (handle.kind === 'sqlite') await sql`pragma optimize`.execute(handle.db)
  else await sql`analyze ${tableIdentifier(handle, table)}`.execute(handle.db)
}

/** Rows written to a table since its statistics were last refreshed, before they are refreshed again. */
const minimumRows = 1000

/**
 * Refreshes a table's statistics after bulk writes, not after each one: once the rows written since the
 * last refresh reach 1,000 and the rows written before it (the refreshes double apart), so a million-row
 * import in 1,000-row chunks refreshes about ten times, not a thousand.
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
      if (entry.since < Math.max(minimumRows, entry.before)) return
      entry.before += entry.since
      entry.since = 0
      await refresh(handle, table).catch(onError)
    },
  }
}

export type StatisticsPacer = ReturnType<typeof createStatisticsPacer>
