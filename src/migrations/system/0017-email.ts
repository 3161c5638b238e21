import type { Migration } from '../../lib/db/index.js'

/**
 * Email (decision 037): the message delivery log, one row per recipient of each message send_email sent
 * (never a subject or a body), and each project's count of recipients per UTC day, the figure the
 * maxEmailsPerDay quota is checked and reserved against. Times are milliseconds since the epoch.
 */
export const m0017Email: Migration = {
  name: '0017-email',
  async up(db) {
    await db.schema
      .createTable('email_messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      // The provider's id (SMTP Message-ID, or the REST provider's id): what a receipt names.
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('recipient', 'text', (c) => c.notNull())
      // email_binding | rest_api
      .addColumn('channel', 'text', (c) => c.notNull())
      // sent (the provider accepted it) | delivered (a receipt confirmed it)
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('flow_id', 'text')
      .addColumn('run_id', 'text')
      .addColumn('step_key', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .execute()
    // The log is read newest first per project; a receipt finds its rows by the provider's id.
    await db.schema
      .createIndex('email_messages_project')
      .on('email_messages')
      .columns(['project_id', 'created_at'])
      .execute()
    await db.schema.createIndex('email_messages_message').on('email_messages').columns(['message_id']).execute()

    await db.schema
      .createTable('email_daily_usage')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      // The UTC day, YYYY-MM-DD.
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('recipients', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('email_daily_usage_pk', ['project_id', 'day'])
      .execute()
  },
}
