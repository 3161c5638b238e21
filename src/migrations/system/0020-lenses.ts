import type { Migration } from '../../lib/db/index.js'

/**
 * Lenses (docs/lenses.md): a named, parameterised query over a collection with html and md templates. The
 * draft is edited in place; each publish freezes it as a numbered, immutable version, and render reads the
 * published one. Definitions are JSON text; times are Unix seconds.
 */
export const m0020Lenses: Migration = {
  name: '0020-lenses',
  async up(db) {
    await db.schema
      .createTable('lenses')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('enabled', 'boolean', (c) => c.notNull())
      // JSON: the draft definition (name, description, collection, filter, sort, fields, limit, params, template).
      .addColumn('draft', 'text', (c) => c.notNull())
      // The newest version (0: never published); render reads it.
      .addColumn('current_version', 'integer', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('lenses_project_name').on('lenses').columns(['project_id', 'name']).unique().execute()

    await db.schema
      .createTable('lens_versions')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('lens_id', 'text', (c) => c.notNull().references('lenses.id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      // JSON: the definition as it was published; never changed afterwards.
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('change_summary', 'text', (c) => c.notNull())
      .addColumn('published_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('lens_versions_pk', ['lens_id', 'version'])
      .execute()
  },
}
