import { sql } from 'kysely'
import type { Migration } from '../../lib/db/index.js'

/**
 * Flow keys (docs/files.md § Files in flows, decision 040): a file written by a flow at a relative path
 * (`reports/daily.csv`) remembers that path in `flow_key`, so reading and writing the same key name the
 * same file. Unique per project, which is what keeps two racing first writes at one key from making two
 * files; null on every other file (NULLs never collide, and the partial index leaves them out).
 */
export const m0022FilesFlowKey: Migration = {
  name: '0022-files-flow-key',
  async up(db) {
    await db.schema.alterTable('files').addColumn('flow_key', 'text').execute()
    await db.schema
      .createIndex('files_flow_key')
      .unique()
      .on('files')
      .columns(['project_id', 'flow_key'])
      .where(sql.ref('flow_key'), 'is not', null)
      .execute()
  },
}
