import type { Migration } from '../../lib/db/index.js'

/**
 * Who made a flow's published version the one that runs (decision 045): the person a run never exceeds and
 * a schedule acts as. Set by publish and rollback. Existing flows take the author of their published version.
 * Built with Kysely, not raw SQL, so PostgreSQL's schema applies to every table named.
 */
export const m0024FlowsPublishedBy: Migration = {
  name: '0024-flows-published-by',
  async up(db) {
    await db.schema.alterTable('flows').addColumn('published_by', 'text').execute()
    await db
      .updateTable('flows')
      .set((eb) => ({
        published_by: eb
          .selectFrom('flow_versions as v')
          .select('v.created_by')
          .whereRef('v.flow_id', '=', 'flows.id')
          .whereRef('v.version', '=', 'flows.published_version'),
      }))
      .where('published_version', 'is not', null)
      .execute()
  },
}
