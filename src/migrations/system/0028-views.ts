import type { Migration } from '../../lib/db/index.js'

/**
 * Saved views (docs/views.md, decision 063): a named way to look at one collection, personal to its owner
 * or shared with the project. The definition is JSON text; times are Unix seconds. `name_scope` is
 * `shared` or `user:<id>`, so names clash only among the shared views or among one user's own.
 */
export const m0028Views: Migration = {
  name: '0028-views',
  async up(db) {
    await db.schema
      .createTable('views')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('collection', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('shared', 'boolean', (c) => c.notNull())
      // The user who owns a personal view (and created a shared one); null for a shared view made by a service key.
      .addColumn('owner_id', 'text')
      .addColumn('name_scope', 'text', (c) => c.notNull())
      // JSON: filter, sortBy, fields, limit, search, layout, layoutOptions.
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('views_project_scope_name')
      .on('views')
      .columns(['project_id', 'name_scope', 'name'])
      .unique()
      .execute()
    await db.schema.createIndex('views_project_collection').on('views').columns(['project_id', 'collection']).execute()
  },
}
