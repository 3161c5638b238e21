import type { Migration } from '../../lib/db/index.js'

/**
 * Notifications (issue 17, decision 038): each user's in-app inbox, written by send_notification and the
 * system flows; and the mark of a system-managed flow (`flows.system`: the system operation it runs,
 * null for a user's flow), one of each kind per project.
 */
export const m0018Notifications: Migration = {
  name: '0018-notifications',
  async up(db) {
    await db.schema
      .createTable('notifications')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // The recipient's project: a flow notifies users of its own project only.
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      // info | success | warning | error
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('link', 'text')
      // Where it came from: the flow and run that sent it (null when sent otherwise).
      .addColumn('flow_id', 'text')
      .addColumn('run_id', 'text')
      // A sender's key for "one unread of this kind" (system_limit_check: one warning per quota until read).
      .addColumn('dedupe_key', 'text')
      // Milliseconds since the epoch (the inbox is ordered by the time sent, then by id, which sorts as sent).
      .addColumn('read_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    // The inbox: a user's notifications, unread first, newest first.
    await db.schema
      .createIndex('notifications_inbox')
      .on('notifications')
      .columns(['project_id', 'user_id', 'read_at', 'created_at'])
      .execute()

    await db.schema.alterTable('flows').addColumn('system', 'text').execute()
    // NULLs are distinct in a unique index on both dialects: users' flows are not constrained.
    await db.schema.createIndex('flows_system').on('flows').columns(['project_id', 'system']).unique().execute()
  },
}
