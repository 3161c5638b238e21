import { sql } from 'kysely'
import type { Migration } from '../../lib/db/index.js'

/**
 * One small index over active runs instead of three over every run. `flow_runs_active` (status,
 * created_at), `flow_runs_lease` (status, lease_until) and `flow_runs_project_status` (project_id, status)
 * each held an entry for every run ever made, and each moved it on every status change: with a backlog of
 * pending runs, a run's start (pending → running) cost three times what it did before leases (measured in
 * bench/flows.ts, engine alone). The lease sweep, lease renewal and the backlog quota read only pending
 * and running runs; a partial index holds those alone, so it stays the size of the work in progress.
 * Queries that use it repeat its condition (`status in ('pending', 'running')`): SQLite uses a partial
 * index only when the query's WHERE names the index's own term.
 */
export const m0027RunsLiveIndex: Migration = {
  name: '0027-runs-live-index',
  async up(db) {
    await db.schema.dropIndex('flow_runs_active').execute()
    await db.schema.dropIndex('flow_runs_lease').execute()
    await db.schema.dropIndex('flow_runs_project_status').execute()
    await db.schema
      .createIndex('flow_runs_live')
      .on('flow_runs')
      .columns(['project_id', 'status', 'lease_until'])
      .where(sql.raw<boolean>("status in ('pending', 'running')"))
      .execute()
  },
}
