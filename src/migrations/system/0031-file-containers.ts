import type { Migration } from '../../lib/db/index.js'

/**
 * File containers (docs/containers.md, decision 066): a named place for files with the rules an upload
 * into it follows (types, size, image variants, default visibility) and where its bytes go (storage
 * connection, bucket, key prefix). Lists are JSON text; times are Unix seconds. A file remembers the
 * container it was uploaded into in `files.container_id` (null for every other file), which is what
 * regenerate by container and the refused delete of a container in use read.
 */
export const m0031FileContainers: Migration = {
  name: '0031-file-containers',
  async up(db) {
    await db.schema
      .createTable('file_containers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      // Null: the instance's own storage.
      .addColumn('storage_connection_id', 'text')
      .addColumn('bucket_name', 'text')
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('visibility', 'text', (c) => c.notNull())
      // JSON: [{ name, size }].
      .addColumn('image_sizes', 'text', (c) => c.notNull())
      .addColumn('max_file_bytes', 'bigint')
      // JSON: ["image/png", "image/*"]; [] allows any type.
      .addColumn('allowed_types', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex('file_containers_project_name')
      .on('file_containers')
      .columns(['project_id', 'name'])
      .unique()
      .execute()
    await db.schema.alterTable('files').addColumn('container_id', 'text').execute()
    await db.schema.createIndex('files_container').on('files').columns(['project_id', 'container_id']).execute()
  },
}
