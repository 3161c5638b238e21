import type { Migration } from '../../lib/db/index.js'

/** The collections registry, registered database bindings, and record shares. */
export const m0004Collections: Migration = {
  name: '0004-collections',
  async up(db) {
    await db.schema
      .createTable('database_bindings')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('url_sealed', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('database_bindings_project_name', ['project_id', 'name'])
      .execute()

    await db.schema
      .createTable('collections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('storage_type', 'text', (c) => c.notNull())
      .addColumn('database_id', 'text', (c) => c.notNull())
      .addColumn('schema_version', 'integer', (c) => c.notNull())
      .addColumn('fields', 'text', (c) => c.notNull())
      .addColumn('access_control', 'text')
      .addColumn('owner_scoped', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('collections_project_name', ['project_id', 'name'])
      .execute()

    await db.schema
      .createTable('record_shares')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
      .addColumn('record_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('access', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('record_shares_one_per_person', ['collection_id', 'record_id', 'user_id'])
      .execute()
    await db.schema
      .createIndex('record_shares_user')
      .on('record_shares')
      .columns(['user_id', 'collection_id'])
      .execute()
  },
}
