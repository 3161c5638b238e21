import type { Migration } from '../../lib/db/index.js'

/**
 * The tool server's invocation log (issue 18, decision 043): one row per tool call, with the key that made
 * it, estimated input and output tokens (characters / 4), duration and outcome (`ok` or the error code).
 * Never the arguments or the result. Times are milliseconds.
 */
export const m0023McpInvocations: Migration = {
  name: '0023-mcp-invocations',
  async up(db) {
    await db.schema
      .createTable('mcp_invocations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('input_tokens', 'integer', (c) => c.notNull())
      .addColumn('output_tokens', 'integer', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('mcp_invocations_project_time')
      .on('mcp_invocations')
      .columns(['project_id', 'created_at'])
      .execute()
  },
}
