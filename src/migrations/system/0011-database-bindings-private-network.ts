import type { Migration } from '../../lib/db/index.js'

/**
 * Whether a database binding may connect to loopback, private and link-local addresses: true when a
 * super_admin registered it. Bindings registered before this rule existed keep working (true), so an
 * upgrade does not cut off on-premises databases; new ones registered by anyone else are guarded.
 */
export const m0011DatabaseBindingsPrivateNetwork: Migration = {
  name: '0011-database-bindings-private-network',
  async up(db) {
    await db.schema
      .alterTable('database_bindings')
      .addColumn('private_network', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute()
    await db.updateTable('database_bindings').set({ private_network: true }).execute()
  },
}
