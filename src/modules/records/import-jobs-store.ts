import type { Kysely } from 'kysely'

export interface ImportJobRow {
  id: string
  project_id: string
  collection: string
  owner: string
  status: string
  total: number
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

/** What one chunk adds to a job's tallies. */
export interface ChunkTally {
  imported: number
  failed: number
  updatedAt: number
  expiresAt: number
}

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

    /** Adds a chunk to a pending job (counts in the UPDATE itself); returns the job after, or undefined. */
    async addChunk(id: string, tally: ChunkTally): Promise<ImportJobRow | undefined> {
      return db
        .updateTable('record_import_jobs')
        .set((eb) => ({
          imported: eb('imported', '+', tally.imported),
          failed: eb('failed', '+', tally.failed),
          chunks: eb('chunks', '+', 1),
          updated_at: tally.updatedAt,
          expires_at: tally.expiresAt,
        }))
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst()
    },

    async setErrors(id: string, errors: string): Promise<void> {
      await db.updateTable('record_import_jobs').set({ errors }).where('id', '=', id).execute()
    },

    /** Marks a job complete; returns it after, or undefined when it is no longer there. */
    async complete(id: string, updatedAt: number, expiresAt: number): Promise<ImportJobRow | undefined> {
      return db
        .updateTable('record_import_jobs')
        .set({ status: 'complete', updated_at: updatedAt, expires_at: expiresAt })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
    },

    /** Deletes every expired job (of every project); returns how many. */
    async deleteExpiredAcrossProjects(now: number): Promise<number> {
      const result = await db.deleteFrom('record_import_jobs').where('expires_at', '<=', now).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}

export type ImportJobsStore = ReturnType<typeof createImportJobsStore>
