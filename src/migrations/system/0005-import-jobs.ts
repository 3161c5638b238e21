import type { Migration } from '../../lib/db/index.js'

/** Record import jobs: the tallies of a chunked NDJSON import, kept until they expire. */
export const m0005ImportJobs: Migration = {
  name: '0005-import-jobs',
  async up(db) {
    await db.schema
      .createTable('record_import_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('collection', 'text', (c) => c.notNull())
      // The user id, or `key:<id>` for an API key that acts for no user.
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('total', 'bigint', (c) => c.notNull())
      .addColumn('imported', 'bigint', (c) => c.notNull())
      .addColumn('failed', 'bigint', (c) => c.notNull())
      .addColumn('chunks', 'integer', (c) => c.notNull())
      // A JSON array: the first errors of the job's chunks, capped.
      .addColumn('errors', 'text', (c) => c.notNull())
      // Milliseconds since the epoch.
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('record_import_jobs_expires').on('record_import_jobs').column('expires_at').execute()
  },
}
