import type { Migration } from '../../lib/db/index.js'

/**
 * Search indexes (issue 17, decision 042): a named set of sources (collections and their fields) compiled
 * into an SQLite FTS5 file kept in object storage. The row holds the definition and the build state; the
 * file is `search-indexes/<project>/<index id>/<build id>.db` in object storage. Times are milliseconds.
 */
export const m0021SearchIndexes: Migration = {
  name: '0021-search-indexes',
  async up(db) {
    await db.schema
      .createTable('search_indexes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      // JSON: [{ collection, fields: [name…] }]
      .addColumn('sources', 'text', (c) => c.notNull())
      // stale | building | ready | failed
      .addColumn('status', 'text', (c) => c.notNull())
      // The build whose file queries read (null: never built), when it finished, what it holds.
      .addColumn('build_id', 'text')
      .addColumn('built_at', 'bigint')
      .addColumn('document_count', 'integer', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      // The build under way (null: none); the newest one started wins, an older one finishing is discarded.
      .addColumn('pending_build_id', 'text')
      .addColumn('build_started_at', 'bigint')
      // Moves on every change to a source (an import, a truncate, a changed definition); a build that
      // finds it moved since it started ends stale, not ready.
      .addColumn('stale_seq', 'integer', (c) => c.notNull())
      .addColumn('pending_seq', 'integer')
      .addColumn('error', 'text')
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('search_indexes_name')
      .on('search_indexes')
      .columns(['project_id', 'name'])
      .unique()
      .execute()
  },
}
