import type { Migration } from '../../lib/db/index.js'

/**
 * Collection webhooks (core-api § Events) and their delivery log. The secret and the header values are
 * sealed (AES-256-GCM under SECRET_KEY, purpose `webhooks`); a delivery keeps its payload so every retry
 * sends the same body, and its attempts as JSON text. Webhook times are Unix seconds; delivery and attempt times are milliseconds (a delivery log orders within a second).
 */
export const m0014Webhooks: Migration = {
  name: '0014-webhooks',
  async up(db) {
    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('collection', 'text', (c) => c.notNull())
      // JSON: the record events it fires on (record.create, record.update, record.delete).
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      // Sealed: the signing secret (null: deliveries are unsigned) and the JSON object of extra headers.
      .addColumn('secret_sealed', 'text')
      .addColumn('headers_sealed', 'text')
      // JSON: the header names alone, so reads need not unseal.
      .addColumn('header_names', 'text', (c) => c.notNull())
      .addColumn('active', 'boolean', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    // A record write looks up the project's active webhooks of the collection.
    await db.schema
      .createIndex('webhooks_collection')
      .on('webhooks')
      .columns(['project_id', 'collection', 'active'])
      .execute()

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('collection', 'text', (c) => c.notNull())
      .addColumn('record_id', 'text')
      // pending | retrying | success | failed
      .addColumn('status', 'text', (c) => c.notNull())
      // The exact JSON body sent on every attempt (signed as it is).
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      // JSON: [{ attempt, at, status, durationMs, error }]
      .addColumn('attempt_log', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('duration_ms', 'integer')
      .addColumn('error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('webhook_deliveries_webhook')
      .on('webhook_deliveries')
      .columns(['webhook_id', 'created_at'])
      .execute()
  },
}
