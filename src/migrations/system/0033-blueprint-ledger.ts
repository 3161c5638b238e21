import type { Migration } from '../../lib/db/index.js'

/**
 * The blueprint install ledger (docs/blueprints.md, decision 070). `blueprint_installs`: one row per install
 * run, with the document it installed (`source_md`, never a secret's value: secrets stay placeholders) and
 * the non-secret parameter values; `supersedes`/`superseded_by` chain the runs of one blueprint.
 * A blueprint is installed once per namespace value (`namespace`: the value of its namespace parameter), so
 * one project may hold two help desks; every lookup is by project, blueprint and namespace.
 * `blueprint_resources`: one row per resource a blueprint's brick produced, taken over by each later install
 * of that brick; `canonical_json` and `content_hash` are the resource as read back after the write (the
 * baseline of the next plan). `resource_ref` is null while a created resource is pending. Times are Unix
 * milliseconds.
 */
export const m0033BlueprintLedger: Migration = {
  name: '0033-blueprint-ledger',
  async up(db) {
    await db.schema
      .createTable('blueprint_installs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('blueprint_id', 'text', (c) => c.notNull())
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('doc_hash', 'text', (c) => c.notNull())
      .addColumn('source_md', 'text', (c) => c.notNull())
      // JSON: the non-secret parameter values given; secret parameters by name only (secrets_json).
      .addColumn('params_json', 'text', (c) => c.notNull())
      .addColumn('secrets_json', 'text', (c) => c.notNull())
      .addColumn('assemblies_json', 'text', (c) => c.notNull())
      .addColumn('consent_json', 'text', (c) => c.notNull())
      // in_progress, partial, complete, superseded, uninstalled
      .addColumn('status', 'text', (c) => c.notNull())
      // client (two-phase: the opener applies and settles) or server (?apply=true)
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('supersedes', 'text')
      .addColumn('superseded_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('blueprint_installs_project_blueprint')
      .on('blueprint_installs')
      .columns(['project_id', 'blueprint_id', 'namespace', 'created_at'])
      .execute()
    await db.schema
      .createIndex('blueprint_installs_status')
      .on('blueprint_installs')
      .columns(['status', 'updated_at'])
      .execute()

    await db.schema
      .createTable('blueprint_resources')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('install_id', 'text', (c) => c.notNull().references('blueprint_installs.id').onDelete('cascade'))
      .addColumn('blueprint_id', 'text', (c) => c.notNull())
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('brick_id', 'text', (c) => c.notNull())
      .addColumn('brick_kind', 'text', (c) => c.notNull())
      .addColumn('resource_kind', 'text', (c) => c.notNull())
      .addColumn('resource_ref', 'text')
      // The plan's verdict when the install took the row (CREATE, NOOP, UPDATE, ADOPT, DRIFTED, RECREATE).
      .addColumn('verdict', 'text', (c) => c.notNull())
      // Dependency order within the install; an uninstall goes backwards.
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('content_hash', 'text')
      .addColumn('canonical_json', 'text')
      // pending, settled, failed, skipped, rolled_back, detached
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('blueprint_resources_identity')
      .on('blueprint_resources')
      .columns(['project_id', 'blueprint_id', 'brick_id', 'resource_ref'])
      .unique()
      .execute()
    await db.schema
      .createIndex('blueprint_resources_install')
      .on('blueprint_resources')
      .columns(['install_id', 'position'])
      .execute()
    await db.schema
      .createIndex('blueprint_resources_claims')
      .on('blueprint_resources')
      .columns(['project_id', 'resource_kind', 'resource_ref'])
      .execute()
  },
}
