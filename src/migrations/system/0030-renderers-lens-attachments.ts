import type { Migration } from '../../lib/db/index.js'

/**
 * Renderers (docs/renderers.md): a named presentation template for one collection's records, and lens
 * attachments: which lens a collection offers on a record or a list. Both go with their project (foreign
 * key) and with their collection (the collections module's onRemoved); attachments go with their lens
 * (the lenses module's onDeleted). Times are Unix seconds.
 */
export const m0030RenderersLensAttachments: Migration = {
  name: '0030-renderers-lens-attachments',
  async up(db) {
    await db.schema
      .createTable('renderers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('collection', 'text', (c) => c.notNull())
      // card | detail | row: where the admin UI and lenses use it.
      .addColumn('kind', 'text', (c) => c.notNull())
      // The section template's source, parsed and checked when saved.
      .addColumn('template', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('renderers_project_name')
      .on('renderers')
      .columns(['project_id', 'name'])
      .unique()
      .execute()
    await db.schema
      .createIndex('renderers_project_collection')
      .on('renderers')
      .columns(['project_id', 'collection'])
      .execute()

    await db.schema
      .createTable('lens_attachments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      // No foreign key to lenses: the lenses module's onDeleted removes them (one owner per table).
      .addColumn('lens_id', 'text', (c) => c.notNull())
      .addColumn('collection', 'text', (c) => c.notNull())
      // record | list
      .addColumn('placement', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    // One lens is offered once per collection and placement.
    await db.schema
      .createIndex('lens_attachments_project_place')
      .on('lens_attachments')
      .columns(['project_id', 'collection', 'placement', 'lens_id'])
      .unique()
      .execute()
    await db.schema
      .createIndex('lens_attachments_project_lens')
      .on('lens_attachments')
      .columns(['project_id', 'lens_id'])
      .execute()
  },
}
