import type { ExpressionBuilder, Kysely } from 'kysely'
import { SYSTEM_COLLECTION, type FileRow } from './model.js'

type Tables = { files: FileRow }

/** Whose private files a query may include: everyone's (`bypass`), or the owner's own beside the public ones. */
export interface Sight {
  owner: string | null
  bypass: boolean
}

/** The complete files of a project a caller may see. */
function seen(db: Kysely<Tables>, projectId: string, sight: Sight) {
  const query = db.selectFrom('files').where('project_id', '=', projectId).where('status', '=', 'complete')
  if (sight.bypass) return query
  const owner = sight.owner
  return query.where((eb: ExpressionBuilder<Tables, 'files'>) =>
    owner === null
      ? eb('visibility', '=', 'public')
      : eb.or([eb('visibility', '=', 'public'), eb('owner', '=', owner)]),
  )
}

/** SQL for `files` (system database); the files module is its only owner. Every function takes the project first. */
export function createFilesStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  const numeric = (row: FileRow | undefined): FileRow | undefined =>
    row && {
      ...row,
      size_bytes: Number(row.size_bytes),
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
    }

  return {
    /** How many files of the project were uploaded into a container (its delete is refused while any are). */
    async countInContainer(projectId: string, containerId: string): Promise<number> {
      const row = await db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('project_id', '=', projectId)
        .where('container_id', '=', containerId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },

    /** How many files of the project keep their bytes on a storage connection (its delete is refused while any do). */
    async countOnConnection(projectId: string, connectionId: string): Promise<number> {
      const row = await db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('project_id', '=', projectId)
        .where('storage_connection_id', '=', connectionId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },

    async insert(row: FileRow): Promise<void> {
      await db.insertInto('files').values(row).execute()
    },

    async byId(projectId: string, id: string): Promise<FileRow | undefined> {
      return numeric(
        await db
          .selectFrom('files')
          .selectAll()
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .executeTakeFirst(),
      )
    },

    /** The file written at this flow key (unique per project), whatever its visibility. */
    async byFlowKey(projectId: string, flowKey: string): Promise<FileRow | undefined> {
      return numeric(
        await db
          .selectFrom('files')
          .selectAll()
          .where('project_id', '=', projectId)
          .where('flow_key', '=', flowKey)
          .executeTakeFirst(),
      )
    },

    /** Complete files the caller may see, newest first, one page; and how many there are. */
    async listComplete(
      projectId: string,
      sight: Sight,
      page: { limit: number; offset: number; collection?: string },
    ): Promise<{ rows: FileRow[]; total: number }> {
      let query = seen(db, projectId, sight)
      if (page.collection !== undefined) query = query.where('collection_name', '=', page.collection)
      const rows = await query
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute()
      const counted = await query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
      return { rows: rows.map((r) => numeric(r)!), total: Number(counted.n) }
    },

    /** Complete files the caller may see with an id after `after`, in id order (regenerate pages); and, when asked, their count. */
    async pageById(
      projectId: string,
      sight: Sight,
      options: { after: string | null; limit: number; collection: string | null; container?: string; count: boolean },
    ): Promise<{ rows: FileRow[]; total: number | null }> {
      let query = seen(db, projectId, sight)
      if (options.collection !== null) query = query.where('collection_name', '=', options.collection)
      if (options.container !== undefined) query = query.where('container_id', '=', options.container)
      const total = options.count
        ? Number((await query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n)
        : null
      if (options.after !== null) query = query.where('id', '>', options.after)
      const rows = await query.selectAll().orderBy('id', 'asc').limit(options.limit).execute()
      return { rows: rows.map((r) => numeric(r)!), total }
    },

    /**
     * Bytes the project holds in the instance's storage: complete files, and pending ones created after
     * `pendingSince` (their upload URL may still be used). Files on a storage connection are the project's
     * own bucket's, outside the quota (decision 067).
     */
    async usage(projectId: string, pendingSince: number): Promise<number> {
      const row = await db
        .selectFrom('files')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('size_bytes'), eb.val(0)).as('bytes'))
        .where('project_id', '=', projectId)
        .where('storage_connection_id', 'is', null)
        .where((eb) =>
          eb.or([
            eb('status', '=', 'complete'),
            eb.and([eb('status', '=', 'pending'), eb('created_at', '>', pendingSince)]),
          ]),
        )
        .executeTakeFirstOrThrow()
      return Number(row.bytes)
    },

    /** Marks a pending file complete, served from `r2_key`; the row after, or undefined when it was not pending. */
    async complete(
      projectId: string,
      id: string,
      set: { r2_key: string; sha256: string; updated_at: number; variants: string },
    ): Promise<FileRow | undefined> {
      return numeric(
        await db
          .updateTable('files')
          .set({ ...set, status: 'complete' })
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .where('status', '=', 'pending')
          .returningAll()
          .executeTakeFirst(),
      )
    },

    /** New content for a complete file, only while its original is still `expectedKey`; the row after, or undefined. */
    async replaceContent(
      projectId: string,
      id: string,
      expectedKey: string,
      set: Pick<FileRow, 'r2_key' | 'mime_type' | 'size_bytes' | 'sha256' | 'updated_at' | 'variants'>,
    ): Promise<FileRow | undefined> {
      return numeric(
        await db
          .updateTable('files')
          .set(set)
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .where('r2_key', '=', expectedKey)
          .returningAll()
          .executeTakeFirst(),
      )
    },

    /** Swaps the variants JSON if it is still `expected` and the original still `expectedKey` (optimistic); the row after, or undefined. */
    async swapVariants(
      projectId: string,
      id: string,
      expectedKey: string,
      expected: string,
      next: string,
      updatedAt?: number,
    ): Promise<FileRow | undefined> {
      return numeric(
        await db
          .updateTable('files')
          .set({ variants: next, ...(updatedAt === undefined ? {} : { updated_at: updatedAt }) })
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .where('r2_key', '=', expectedKey)
          .where('variants', '=', expected)
          .returningAll()
          .executeTakeFirst(),
      )
    },

    /** Removes a row; whether it was there. */
    async remove(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('files')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    /** The files of these ids, whatever their collection and status. */
    async byIds(projectId: string, ids: readonly string[]): Promise<FileRow[]> {
      if (ids.length === 0) return []
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', 'in', [...ids])
        .execute()
      return rows.map((r) => numeric(r)!)
    },

    /** Attaches these files to no collection (`__system`): their collection went, and they stay. */
    async detach(projectId: string, ids: readonly string[], updatedAt: number): Promise<void> {
      if (ids.length === 0) return
      await db
        .updateTable('files')
        .set({ collection_name: SYSTEM_COLLECTION, updated_at: updatedAt })
        .where('project_id', '=', projectId)
        .where('id', 'in', [...ids])
        .execute()
    },

    /** The files of these ids attached to one collection. */
    async inCollection(projectId: string, collection: string, ids: readonly string[]): Promise<FileRow[]> {
      if (ids.length === 0) return []
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('collection_name', '=', collection)
        .where('id', 'in', ids)
        .execute()
      return rows.map((r) => numeric(r)!)
    },

    /** Up to `limit` files attached to any of these collections, by id after `after`. */
    async ofCollections(
      projectId: string,
      collections: readonly string[],
      after: string,
      limit: number,
    ): Promise<FileRow[]> {
      if (collections.length === 0) return []
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('collection_name', 'in', [...collections])
        .where('id', '>', after)
        .orderBy('id')
        .limit(limit)
        .execute()
      return rows.map((r) => numeric(r)!)
    },

    /** Complete files created before `before` that still hold an upload key, in every project, oldest first, at most `limit`. */
    async uploadKeysAcrossProjects(before: number, limit: number): Promise<FileRow[]> {
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('upload_key', 'is not', null)
        .where('created_at', '<', before)
        .where('status', '=', 'complete')
        .orderBy('created_at')
        .limit(limit)
        .execute()
      return rows.map((r) => numeric(r)!)
    },

    /** Forgets a file's upload key once its object is removed (only while it is still `key`). */
    async dropUploadKey(projectId: string, id: string, key: string): Promise<void> {
      await db
        .updateTable('files')
        .set({ upload_key: null })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .where('upload_key', '=', key)
        .execute()
    },

    /** Pending files created before `before`, in every project (abandoned uploads), at most `limit`. */
    async abandonedAcrossProjects(before: number, limit: number): Promise<FileRow[]> {
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('status', '=', 'pending')
        .where('created_at', '<', before)
        .orderBy('created_at')
        .limit(limit)
        .execute()
      return rows.map((r) => numeric(r)!)
    },
  }
}

export type FilesStore = ReturnType<typeof createFilesStore>
