import { sql } from 'kysely'
import type { Migration } from '../../lib/db/index.js'

/**
 * Single-use upload URLs (docs/files.md § Upload with a presigned URL): an upload URL writes to a key of its
 * own (`projects/<projectId>/uploads/<id>/<safe filename>`), and confirm-upload copies those bytes to the
 * key the file is served from, which no URL can write to. `upload_key` remembers the URL's key until a sweep
 * removes it, once the URL is certainly dead; null on rows uploaded otherwise and once removed.
 */
export const m0010FilesUploadKey: Migration = {
  name: '0010-files-upload-key',
  async up(db) {
    await db.schema.alterTable('files').addColumn('upload_key', 'text').execute()
    // The sweep's question (keys still held, oldest first); few rows hold one at any time.
    await db.schema
      .createIndex('files_upload_key')
      .on('files')
      .column('created_at')
      .where(sql.ref('upload_key'), 'is not', null)
      .execute()
  },
}
