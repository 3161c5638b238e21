import type { Migration } from '../../lib/db/index.js'

/** Structure scan and repair jobs (core-api "Structure check and repair job"): rows, so every instance sees them. */
export const m0006StructureJobs: Migration = {
  name: '0006-structure-jobs',
  async up(db) {
    await db.schema
      .createTable('structure_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
      .addColumn('collection', 'text', (c) => c.notNull())
      .addColumn('field', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      // The shape the job checks against, and whether the field's structure changed since the job started.
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('outdated', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('checked', 'integer', (c) => c.notNull())
      .addColumn('invalid', 'integer', (c) => c.notNull())
      .addColumn('estimate', 'text')
      .addColumn('groups', 'text', (c) => c.notNull())
      .addColumn('cursor', 'text')
      .addColumn('repair', 'text')
      .addColumn('error', 'text')
      .addColumn('started_by', 'text')
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('structure_jobs_field')
      .on('structure_jobs')
      .columns(['collection_id', 'field', 'kind', 'started_at'])
      .execute()
  },
}
