import type { Migration } from '../../lib/db/index.js'

/**
 * The durable embedded queue (issue 26, decision 055): `queue_jobs` holds every job not yet finished
 * (`waiting`, due at `run_at`; `active`, leased by `locked_by` until `locked_until`) and failed ones for a
 * week; a completed job is deleted. `key` dedupes a job while it is unfinished (failing frees it).
 * `queue_schedules` holds each repeatable schedule and its next tick. Times are milliseconds. Built with
 * Kysely, so PostgreSQL's system schema applies.
 */
export const m0026QueueJobs: Migration = {
  name: '0026-queue-jobs',
  async up(db) {
    await db.schema
      .createTable('queue_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('queue', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      // JSON text: the job's data as added.
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('key', 'text')
      // waiting | active | failed
      .addColumn('state', 'text', (c) => c.notNull())
      // Runs started (the current one included when active) and runs allowed in all.
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      // fixed | exponential, or null for no backoff.
      .addColumn('backoff_type', 'text')
      .addColumn('backoff_ms', 'bigint')
      // The schedule tick a job fires for; null for a job added directly.
      .addColumn('tick', 'bigint')
      .addColumn('run_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'bigint')
      // Runs lost with their instance (a lease that lapsed); a second one fails the job.
      .addColumn('stalls', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    // Taking the next due job of a queue, and finding stalled ones.
    await db.schema.createIndex('queue_jobs_due').on('queue_jobs').columns(['queue', 'state', 'run_at']).execute()
    await db.schema.createIndex('queue_jobs_lease').on('queue_jobs').columns(['state', 'locked_until']).execute()
    // Null keys never conflict (both dialects), so only keyed jobs are unique.
    await db.schema.createIndex('queue_jobs_key').on('queue_jobs').columns(['queue', 'key']).unique().execute()

    await db.schema
      .createTable('queue_schedules')
      .addColumn('queue', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('pattern', 'text', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('job', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('backoff_type', 'text')
      .addColumn('backoff_ms', 'bigint')
      // The pending tick (null: none), and the last tick that added a job (a replacement starts after it).
      .addColumn('next_at', 'bigint')
      .addColumn('last_tick', 'bigint')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('queue_schedules_pk', ['queue', 'id'])
      .execute()
    await db.schema.createIndex('queue_schedules_due').on('queue_schedules').columns(['queue', 'next_at']).execute()
  },
}
