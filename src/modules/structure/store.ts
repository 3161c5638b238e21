import type { Kysely } from 'kysely'

export type JobKind = 'scan' | 'repair'
export type JobStatus = 'running' | 'complete' | 'cancelled' | 'superseded' | 'failed'

export interface JobRow {
  id: string
  project_id: string
  collection_id: string
  collection: string
  field: string
  kind: JobKind
  status: JobStatus
  fingerprint: string
  outdated: boolean | number
  checked: number
  invalid: number
  /** JSON: { total, upperBound, narrowed }. */
  estimate: string | null
  /** JSON: KeyedGroup[]. */
  groups: string
  /** The last record id walked. */
  cursor: string | null
  /** JSON: the repair block and its fixes. */
  repair: string | null
  error: string | null
  started_by: string | null
  /** Milliseconds. */
  started_at: number
  updated_at: number
}

export type JobProgress = Partial<
  Pick<JobRow, 'checked' | 'invalid' | 'groups' | 'cursor' | 'repair' | 'estimate' | 'error'>
> & { updated_at: number }

type Tables = { structure_jobs: JobRow }

/** SQL for `structure_jobs` (system database); this module is its only owner. Every function takes the project first. */
export function createJobStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async insert(row: JobRow): Promise<void> {
      await db.insertInto('structure_jobs').values(row).execute()
    },

    /** One job of a collection and kind, or undefined. */
    async find(projectId: string, collectionId: string, kind: JobKind, id: string): Promise<JobRow | undefined> {
      return db
        .selectFrom('structure_jobs')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('collection_id', '=', collectionId)
        .where('kind', '=', kind)
        .where('id', '=', id)
        .executeTakeFirst()
    },

    /** The most recently started scan job of a field, or undefined. */
    async latestScan(projectId: string, collectionId: string, field: string): Promise<JobRow | undefined> {
      return db
        .selectFrom('structure_jobs')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('collection_id', '=', collectionId)
        .where('field', '=', field)
        .where('kind', '=', 'scan')
        .orderBy('started_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    /** Whether a job is still running (a DELETE or a structure change elsewhere stops it). */
    async isRunning(projectId: string, id: string): Promise<boolean> {
      const row = await db
        .selectFrom('structure_jobs')
        .select('status')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return row?.status === 'running'
    },

    /** Saves progress of a running job; false when it is no longer running (cancelled or superseded meanwhile). */
    async progress(projectId: string, id: string, patch: JobProgress): Promise<boolean> {
      const result = await db
        .updateTable('structure_jobs')
        .set(patch)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** Moves a running job to another status (with its last figures); false when it was not running. */
    async finish(
      projectId: string,
      id: string,
      status: Exclude<JobStatus, 'running'>,
      patch: JobProgress,
    ): Promise<boolean> {
      const result = await db
        .updateTable('structure_jobs')
        .set({ ...patch, status })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** A field's structure changed: its running jobs are superseded, and no earlier scan counts any more. */
    async supersede(projectId: string, collectionId: string, field: string, now: number): Promise<void> {
      await db
        .updateTable('structure_jobs')
        .set({ status: 'superseded', updated_at: now })
        .where('project_id', '=', projectId)
        .where('collection_id', '=', collectionId)
        .where('field', '=', field)
        .where('status', '=', 'running')
        .execute()
      await db
        .updateTable('structure_jobs')
        .set({ outdated: true })
        .where('project_id', '=', projectId)
        .where('collection_id', '=', collectionId)
        .where('field', '=', field)
        .execute()
    },

    /** Running jobs whose instance stopped reporting before `before` (ms) are failed. */
    async failStale(projectId: string, collectionId: string, before: number, now: number): Promise<void> {
      await db
        .updateTable('structure_jobs')
        .set({
          status: 'failed',
          error: 'The instance running the job stopped before it finished; start it again',
          updated_at: now,
        })
        .where('project_id', '=', projectId)
        .where('collection_id', '=', collectionId)
        .where('status', '=', 'running')
        .where('updated_at', '<', before)
        .execute()
    },
  }
}

export type JobStore = ReturnType<typeof createJobStore>
