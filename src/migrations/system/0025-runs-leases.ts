import type { Migration } from '../../lib/db/index.js'

/**
 * Durable runs (issue 26, decision 054). An active run belongs to the instance that renews its lease
 * (`instance_id`, `lease_until`): one whose lease ran out is taken over and queued again, resumed or ended
 * `interrupted`, never judged by its age. `retry_of` links a retry to the run it repeats. `flow_run_keys`
 * holds Idempotency-Keys for 24 h: a repeated key answers the first call's run.
 */
export const m0025RunsLeases: Migration = {
  name: '0025-runs-leases',
  async up(db) {
    await db.schema.alterTable('flow_runs').addColumn('instance_id', 'text').execute()
    // null for runs made before leases existed: taken as expired.
    await db.schema.alterTable('flow_runs').addColumn('lease_until', 'bigint').execute()
    await db.schema.alterTable('flow_runs').addColumn('retry_of', 'text').execute()
    await db.schema.createIndex('flow_runs_lease').on('flow_runs').columns(['status', 'lease_until']).execute()
    // The backlog quota counts a project's pending runs.
    await db.schema.createIndex('flow_runs_project_status').on('flow_runs').columns(['project_id', 'status']).execute()
    await db.schema
      .createTable('flow_run_keys')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('flow_id', 'text', (c) => c.notNull().references('flows.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('flow_run_keys_pk', ['project_id', 'flow_id', 'key'])
      .execute()
    await db.schema.createIndex('flow_run_keys_age').on('flow_run_keys').column('created_at').execute()
  },
}
