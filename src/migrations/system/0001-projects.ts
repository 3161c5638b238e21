import { sql } from 'kysely'
import type { Migration } from '../../lib/db/index.js'

export const m0001Projects: Migration = {
  name: '0001-projects',
  async up(db) {
    await db.schema
      .createTable('projects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    // At most one default project, even when two instances start on a fresh database at once.
    await db.schema
      .createIndex('projects_one_default')
      .on('projects')
      .column('is_default')
      .unique()
      .where(sql.ref('is_default'), '=', true)
      .execute()
  },
}
