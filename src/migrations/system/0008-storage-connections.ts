import type { Migration } from '../../lib/db/index.js'

/** External S3-compatible storage connection profiles (core-api "Storage connection"); the secret is sealed. */
export const m0008StorageConnections: Migration = {
  name: '0008-storage-connections',
  async up(db) {
    await db.schema
      .createTable('storage_connections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull().defaultTo('s3'))
      .addColumn('endpoint', 'text', (c) => c.notNull())
      .addColumn('region', 'text', (c) => c.notNull().defaultTo('auto'))
      .addColumn('bucket_name', 'text', (c) => c.notNull())
      .addColumn('access_key_id', 'text', (c) => c.notNull())
      // AES-256-GCM under SECRET_KEY (purpose `storage-connections`); the plaintext is never stored.
      .addColumn('secret_key_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('storage_connections_project')
      .on('storage_connections')
      .columns(['project_id', 'created_at'])
      .execute()
  },
}
