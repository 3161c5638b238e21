import { sql, type Kysely } from 'kysely'

export type IndexStatus = 'stale' | 'building' | 'ready' | 'failed'

export interface SearchIndexRow {
  id: string
  project_id: string
  name: string
  description: string
  /** JSON: the sources, [{ collection, fields }]. */
  sources: string
  status: IndexStatus
  build_id: string | null
  built_at: number | null
  document_count: number
  size_bytes: number
  pending_build_id: string | null
  build_started_at: number | null
  stale_seq: number
  /** stale_seq when the pending build started. */
  pending_seq: number | null
  error: string | null
  created_by: string | null
  created_at: number
  updated_at: number
}

/** What a finished build stores. */
export interface FinishedBuild {
  buildId: string
  builtAt: number
  documentCount: number
  sizeBytes: number
}

type Tables = { search_indexes: SearchIndexRow }

/** SQL for `search_indexes`; this module is its only owner. Every function takes the project first. */
export function createSearchIndexesStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string): Promise<SearchIndexRow[]> {
      return db.selectFrom('search_indexes').selectAll().where('project_id', '=', projectId).orderBy('name').execute()
    },
    async byName(projectId: string, name: string): Promise<SearchIndexRow | undefined> {
      return db
        .selectFrom('search_indexes')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('name', '=', name)
        .executeTakeFirst()
    },
    async byId(projectId: string, id: string): Promise<SearchIndexRow | undefined> {
      return db
        .selectFrom('search_indexes')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    /** Throws already_exists (translated by the database layer) when the name is taken. */
    async insert(row: SearchIndexRow): Promise<void> {
      await db.insertInto('search_indexes').values(row).execute()
    },
    /** New sources or description; a changed definition moves stale_seq, so a build under way ends stale. False when gone. */
    async update(
      projectId: string,
      id: string,
      changes: { description?: string; sources?: string; updated_at: number },
    ): Promise<boolean> {
      let update = db.updateTable('search_indexes').set(changes)
      if (changes.sources !== undefined) {
        update = update.set({
          stale_seq: sql`stale_seq + 1` as never,
          status: sql`case when status = 'building' then 'building' else 'stale' end` as never,
        })
      }
      const result = await update.where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('search_indexes')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
    /**
     * Marks these indexes stale: stale_seq moves on, and the status turns stale unless a build is under way
     * (that build then ends stale, seeing the sequence moved).
     */
    async markStale(projectId: string, ids: readonly string[], now: number): Promise<void> {
      if (ids.length === 0) return
      await db
        .updateTable('search_indexes')
        .set({
          stale_seq: sql`stale_seq + 1` as never,
          status: sql`case when status = 'building' then 'building' else 'stale' end` as never,
          updated_at: now,
        })
        .where('project_id', '=', projectId)
        .where('id', 'in', [...ids])
        .execute()
    },
    /** Shows a build as asked for (status building) before it starts. */
    async markBuilding(projectId: string, id: string, now: number): Promise<void> {
      await db
        .updateTable('search_indexes')
        .set({ status: 'building', updated_at: now })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .execute()
    },
    /** Starts a build: it becomes the pending one (superseding any other) and remembers the sequence it read at. Null when the index is gone. */
    async startBuild(projectId: string, id: string, buildId: string, now: number): Promise<SearchIndexRow | null> {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom('search_indexes')
          .selectAll()
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .executeTakeFirst()
        if (!row) return null
        await trx
          .updateTable('search_indexes')
          .set({
            status: 'building',
            pending_build_id: buildId,
            build_started_at: now,
            pending_seq: Number(row.stale_seq),
            updated_at: now,
          })
          .where('id', '=', id)
          .execute()
        return row
      })
    },
    /**
     * Makes a finished build the one queries read, if it is still the pending one: ready, or stale when a
     * source changed since it started. Answers the build it replaced (its file goes), or false when the
     * build was superseded or the index is gone (then this build's file goes).
     */
    async finishBuild(
      projectId: string,
      id: string,
      done: FinishedBuild,
      now: number,
    ): Promise<{ replaced: string | null } | false> {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom('search_indexes')
          .selectAll()
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .executeTakeFirst()
        if (!row || row.pending_build_id !== done.buildId) return false
        const status: IndexStatus = Number(row.stale_seq) === Number(row.pending_seq) ? 'ready' : 'stale'
        await trx
          .updateTable('search_indexes')
          .set({
            status,
            build_id: done.buildId,
            built_at: done.builtAt,
            document_count: done.documentCount,
            size_bytes: done.sizeBytes,
            pending_build_id: null,
            pending_seq: null,
            error: null,
            updated_at: now,
          })
          .where('id', '=', id)
          .execute()
        return { replaced: row.build_id }
      })
    },
    /** A build that failed, if still the pending one: status failed with the reason; the last good file stays. */
    async failBuild(projectId: string, id: string, buildId: string, error: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable('search_indexes')
        .set({ status: 'failed', error, pending_build_id: null, pending_seq: null, updated_at: now })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .where('pending_build_id', '=', buildId)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
  }
}

export type SearchIndexesStore = ReturnType<typeof createSearchIndexesStore>
