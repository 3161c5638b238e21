import type { Migration } from '../../lib/db/index.js'

/**
 * Automation (automation spec "Flow", "Run", "Quotas"): flows with their immutable versions, runs and their
 * step logs (the truth for status), and each project's quotas. JSON columns are text. Run and step times are
 * milliseconds since the epoch (a run lasts milliseconds); flow times are seconds, as elsewhere.
 */
export const m0013Automate: Migration = {
  name: '0013-automate',
  async up(db) {
    await db.schema
      .createTable('flows')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      // Unique in the project; carried by exports, derived from the name when absent.
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('icon', 'text', (c) => c.notNull())
      .addColumn('color', 'text', (c) => c.notNull())
      // draft | active | inactive
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('trigger_type', 'text', (c) => c.notNull())
      // JSON: the draft's trigger config, operations (steps), options, collections.
      .addColumn('trigger_config', 'text', (c) => c.notNull())
      .addColumn('operations', 'text', (c) => c.notNull())
      .addColumn('options', 'text', (c) => c.notNull())
      .addColumn('collections', 'text', (c) => c.notNull())
      // The creator (flow_owner); null once that user is deleted.
      .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
      // triggering_user | flow_owner | role:<roleId>
      .addColumn('run_as', 'text', (c) => c.notNull())
      .addColumn('current_version', 'integer', (c) => c.notNull())
      .addColumn('published_version', 'integer')
      // The public webhook token (random, made with the flow, kept across import with flowId).
      .addColumn('webhook_token', 'text', (c) => c.notNull().unique())
      .addColumn('last_run_at', 'bigint')
      .addColumn('run_count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('error_count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('flows_slug').on('flows').columns(['project_id', 'slug']).unique().execute()
    // Triggers look up the active flows of a project by type (event, schedule, app_event).
    await db.schema.createIndex('flows_trigger').on('flows').columns(['project_id', 'status', 'trigger_type']).execute()

    await db.schema
      .createTable('flow_versions')
      .addColumn('flow_id', 'text', (c) => c.notNull().references('flows.id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      // JSON: { name, triggerType, triggerConfig, operations, options, collections, runAs } as published.
      .addColumn('snapshot', 'text', (c) => c.notNull())
      .addColumn('change_summary', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('flow_versions_pk', ['flow_id', 'version'])
      .execute()

    await db.schema
      .createTable('flow_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('flow_id', 'text', (c) => c.notNull().references('flows.id').onDelete('cascade'))
      // The published version it runs.
      .addColumn('version', 'integer', (c) => c.notNull())
      // pending | running | completed | failed | cancelled | timed_out
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('trigger_type', 'text', (c) => c.notNull())
      // JSON: { event, collection, method, body } ($trigger), secrets never included.
      .addColumn('trigger', 'text', (c) => c.notNull())
      // JSON: who the run acts as ({ kind, userId, roleId, apiKeyId }), resolved when it was started.
      .addColumn('acting', 'text', (c) => c.notNull())
      // JSON { code, message, step?, statusCode? } for failed, cancelled and timed_out runs.
      .addColumn('error', 'text')
      .addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('parent_run_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      .addColumn('duration_ms', 'integer')
      .execute()
    await db.schema.createIndex('flow_runs_listing').on('flow_runs').columns(['project_id', 'created_at']).execute()
    await db.schema.createIndex('flow_runs_flow').on('flow_runs').columns(['flow_id', 'created_at']).execute()
    // Stale-run cleanup and concurrency counts read the active runs.
    await db.schema.createIndex('flow_runs_active').on('flow_runs').columns(['status', 'created_at']).execute()

    await db.schema
      .createTable('flow_step_logs')
      .addColumn('run_id', 'text', (c) => c.notNull().references('flow_runs.id').onDelete('cascade'))
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('step_key', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      // pending | running | completed | failed | skipped
      .addColumn('status', 'text', (c) => c.notNull())
      // JSON: the resolved config (credentials masked), the output, the error, log lines and unresolved tags.
      .addColumn('input', 'text')
      .addColumn('output', 'text')
      .addColumn('error', 'text')
      .addColumn('logs', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('flow_step_logs_pk', ['run_id', 'position'])
      .execute()

    await db.schema
      .createTable('automate_quotas')
      .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
      // JSON: only the limits changed from the defaults (automation spec "Quotas (defaults)").
      .addColumn('limits', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
  },
}
