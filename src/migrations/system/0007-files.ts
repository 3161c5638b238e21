import type { Migration } from '../../lib/db/index.js'

/** File metadata (core-api "File object"): one row per uploaded file; the bytes live in object storage. */
export const m0007Files: Migration = {
  name: '0007-files',
  async up(db) {
    await db.schema
      .createTable('files')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('collection_name', 'text', (c) => c.notNull())
      // The original's object key: projects/<projectId>/files/<id>/<safe filename> (a replacement gets a new one).
      .addColumn('r2_key', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('mime_type', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      // Hex SHA-256 of the stored bytes; null until the upload is confirmed.
      .addColumn('sha256', 'text')
      // The uploading user; null for service keys, and once the user is deleted.
      .addColumn('uploaded_by', 'text', (c) => c.references('users.id').onDelete('set null'))
      // Who may confirm and attach variants: the user id, or `key:<id>` for an API key that acts for no user.
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('visibility', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      // JSON: { status, items: { <name>: { key, width, height, sizeBytes, mimeType, source } } }.
      .addColumn('variants', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('files_listing').on('files').columns(['project_id', 'status', 'created_at']).execute()
    await db.schema.createIndex('files_collection').on('files').columns(['project_id', 'collection_name']).execute()
  },
}
