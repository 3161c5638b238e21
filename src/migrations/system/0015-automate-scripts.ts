import type { Migration } from '../../lib/db/index.js'

/**
 * Saved scripts (automation spec "Scripts"): JavaScript run by run_script (scriptId) and POST
 * /scripts/:id/test, with the hosts their fetch may reach and their CPU and memory bounds.
 */
export const m0015AutomateScripts: Migration = {
  name: '0015-automate-scripts',
  async up(db) {
    await db.schema
      .createTable('automate_scripts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      // Unique in the project (blueprints find a script by name).
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      // JSON array of host names (`api.example.com`, `*.example.com`).
      .addColumn('allowed_hosts', 'text', (c) => c.notNull())
      .addColumn('max_cpu_ms', 'integer', (c) => c.notNull())
      .addColumn('max_memory_mb', 'integer', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('automate_scripts_name')
      .on('automate_scripts')
      .columns(['project_id', 'name'])
      .unique()
      .execute()
  },
}
