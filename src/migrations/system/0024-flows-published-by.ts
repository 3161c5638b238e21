import { sql } from 'kysely'
import type { Migration } from '../../lib/db/index.js'

/**
 * Who made a flow's published version the one that runs (decision 045): the person a run never exceeds and
 * a schedule acts as. Set by publish and rollback. Existing flows take the author of their published version.
 */
export const m0024FlowsPublishedBy: Migration = {
  name: '0024-flows-published-by',
  async up(db) {
    await db.schema.alterTable('flows').addColumn('published_by', 'text').execute()
    await sql`update flows set published_by = (select v.created_by from flow_versions v where v.flow_id = flows.id and v.version = flows.published_version)
      where published_version is not null`.execute(db)
  },
}
