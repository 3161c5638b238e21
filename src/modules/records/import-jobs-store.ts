import type { Kysely } from 'kysely'

/**
 * Who a job belongs to, which collection it fills, and when it expires. Its status and tallies live in the
 * import ledger, beside the rows (import-ledger-store.ts); the columns below hold them as they stood when
 * the job was made, and seed its ledger entry (a job started before the ledger existed carries on).
 */
export interface ImportJobRow {
  id: string
  project_id: string
  collection: string
  owner: string
  total: number
  /** Seeds only (see above): never updated once the job has a ledger entry. */
  status: string
  imported: number
  failed: number
  chunks: number
  /** JSON array of the job's error sample. */
  errors: string
  created_at: number
  updated_at: number
  expires_at: number
}

type Tables = { record_import_jobs: ImportJobRow }

/** SQL for `record_import_jobs` (system database); the records module is its only owner. */
export function createImportJobsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async insert(row: ImportJobRow): Promise<void> {
      await db.insertInto('record_import_jobs').values(row).execute()
    },

    /** A job of the project and owner that has not expired, or undefined. */
    async find(projectId: string, owner: string, id: string, now: number): Promise<ImportJobRow | undefined> {
      return db
        .selectFrom('record_import_jobs')
        .selectAll()
        .where('id', '=', id)
        .where('project_id', '=', projectId)
        .where('owner', '=', owner)
        .where('expires_at', '>', now)
        .executeTakeFirst()
    },

    /** Records a change of the job (a chunk, finalize): its expiry moves on. */
    async touch(id: string, updatedAt: number, expiresAt: number): Promise<void> {
      await db
        .updateTable('record_import_jobs')
        .set({ updated_at: updatedAt, expires_at: expiresAt })
        .where('id', '=', id)
        .execute()
    },

    /** Deletes every expired job (of every project); returns how many. */
    async deleteExpiredAcrossProjects(now: number): Promise<number> {
      const result = await db.deleteFrom('record_import_jobs').where('expires_at', '<=', now).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}

export type ImportJobsStore = ReturnType<typeof createImportJobsStore>
