import type { Migration } from '../../lib/db/index.js'

/**
 * The navigation tree (docs/navigation.md, decision 064): the project's shared menu, one row per item. The
 * tree is kept as parent links; depth, count and the absence of cycles are checked by the service under a
 * per-project lock, so no constraint here expresses them. Times are Unix seconds.
 */
export const m0029Navigation: Migration = {
  name: '0029-navigation',
  async up(db) {
    await db.schema
      .createTable('navigation_items')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('icon', 'text')
      // view | collection | lens | url | flow, and what it names (a view id, a collection name, a lens id, a URL, a flow id).
      .addColumn('target_kind', 'text', (c) => c.notNull())
      .addColumn('target_ref', 'text', (c) => c.notNull())
      // Null: a top-level item. Not a foreign key: a reorder rewrites every link in one statement list.
      .addColumn('parent_id', 'text')
      .addColumn('sort_order', 'integer', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('navigation_items_project_parent')
      .on('navigation_items')
      .columns(['project_id', 'parent_id'])
      .execute()
  },
}
