import type { Migration } from '../../lib/db/index.js'

/**
 * A collection's declared compound indexes (JSON, null for none) and the layout its table's indexes were
 * built with: 1 for every collection made before live-row indexes (decision 024). The collections module
 * rebuilds the indexes of each collection below the current layout when it starts, then records the new one.
 */
export const m0012CollectionsIndexes: Migration = {
  name: '0012-collections-indexes',
  async up(db) {
    await db.schema.alterTable('collections').addColumn('indexes', 'text').execute()
    await db.schema
      .alterTable('collections')
      .addColumn('index_layout', 'integer', (c) => c.notNull().defaultTo(1))
      .execute()
  },
}
