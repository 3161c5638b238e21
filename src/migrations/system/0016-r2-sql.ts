import type { Migration } from '../../lib/db/index.js'

/**
 * r2_sql collections (decision 036): the version of each one's SQLite file last published to object
 * storage, and which instance holds unpublished writes to it (the writer claim, with its lease).
 */
export const m0016R2Sql: Migration = {
  name: '0016-r2-sql',
  async up(db) {
    await db.schema
      .createTable('r2_sql_files')
      .addColumn('collection_id', 'text', (c) => c.primaryKey().references('collections.id').onDelete('cascade'))
      .addColumn('project_id', 'text', (c) => c.notNull())
      // 1 for the file published when the collection was made; every publish adds one.
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('published_at', 'bigint', (c) => c.notNull())
      // The instance whose working copy holds writes not yet published; null when none does.
      .addColumn('writer', 'text')
      // Changes with every claim and renewal, so a compare-and-set tells claims apart.
      .addColumn('writer_token', 'text')
      // Milliseconds since the epoch; past it, another instance may take the claim over.
      .addColumn('lease_until', 'bigint')
      .execute()
  },
}
