import type { Migration } from '../../lib/db/index.js'

/**
 * Where a file's bytes live (docs/containers.md, decision 067): a file uploaded into a container on a
 * storage connection keeps the connection's id and the bucket it was stored in, so its original, variants
 * and upload key are read and removed there whatever later becomes of the container. Both null for the
 * instance's own storage (every file before this). The index counts a connection's files (its delete is
 * refused while any live on it).
 */
export const m0032FilesStorageConnection: Migration = {
  name: '0032-files-storage-connection',
  async up(db) {
    await db.schema.alterTable('files').addColumn('storage_connection_id', 'text').execute()
    await db.schema.alterTable('files').addColumn('bucket_name', 'text').execute()
    await db.schema
      .createIndex('files_storage_connection')
      .on('files')
      .columns(['project_id', 'storage_connection_id'])
      .execute()
  },
}
