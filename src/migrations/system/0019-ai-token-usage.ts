import type { Migration } from '../../lib/db/index.js'

/**
 * AI tokens each project used per UTC day (automation spec "Quotas": AI tokens per day), counted from
 * the providers' usage figures by the ai module (docs/ai.md). A row per project and day; old days are
 * pruned as new ones are written.
 */
export const m0019AiTokenUsage: Migration = {
  name: '0019-ai-token-usage',
  async up(db) {
    await db.schema
      .createTable('ai_token_usage')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      // YYYY-MM-DD, UTC.
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('tokens', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ai_token_usage_pk', ['project_id', 'day'])
      .execute()
  },
}
