import type { Kysely } from 'kysely'

export interface LensRow {
  id: string
  project_id: string
  name: string
  enabled: boolean | number
  /** JSON: the draft LensDefinition. */
  draft: string
  /** The newest version; 0 before the first publish. */
  current_version: number
  created_by: string | null
  created_at: number
  updated_at: number
}

export interface LensVersionRow {
  project_id: string
  lens_id: string
  version: number
  /** JSON: the LensDefinition as published. */
  definition: string
  change_summary: string
  published_by: string | null
  created_at: number
}

export type LensChanges = Partial<Pick<LensRow, 'name' | 'enabled' | 'draft' | 'updated_at'>>

type Tables = { lenses: LensRow; lens_versions: LensVersionRow }

/** SQL for `lenses` and `lens_versions`; this module is their only owner. Every function takes the project first. */
export function createLensesStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string, page: number, limit: number): Promise<{ rows: LensRow[]; total: number }> {
      const base = db.selectFrom('lenses').where('project_id', '=', projectId)
      const [rows, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('name')
          .orderBy('id')
          .limit(limit)
          .offset((page - 1) * limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
      ])
      return { rows, total: Number(count?.n ?? 0) }
    },
    async byId(projectId: string, id: string): Promise<LensRow | undefined> {
      return db
        .selectFrom('lenses')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    async insert(row: LensRow): Promise<void> {
      await db.insertInto('lenses').values(row).execute()
    },
    /** False when the row is gone. */
    async update(projectId: string, id: string, changes: LensChanges): Promise<boolean> {
      const result = await db
        .updateTable('lenses')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** Deletes the lens and its versions. False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('lens_versions').where('project_id', '=', projectId).where('lens_id', '=', id).execute()
        const result = await trx
          .deleteFrom('lenses')
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .executeTakeFirst()
        return Number(result.numDeletedRows) > 0
      })
    },
    /**
     * Freezes `definition` as the version after `expected` and makes it current, in one transaction. Null
     * when another publish moved the lens first (compare-and-set on current_version) or the lens is gone.
     */
    async publish(
      projectId: string,
      id: string,
      expected: number,
      version: Omit<LensVersionRow, 'project_id' | 'lens_id' | 'version'>,
    ): Promise<number | null> {
      return db.transaction().execute(async (trx) => {
        const next = expected + 1
        const moved = await trx
          .updateTable('lenses')
          .set({ current_version: next })
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .where('current_version', '=', expected)
          .executeTakeFirst()
        if (Number(moved.numUpdatedRows) === 0) return null
        await trx
          .insertInto('lens_versions')
          .values({ ...version, project_id: projectId, lens_id: id, version: next })
          .execute()
        return next
      })
    },
    /** A lens's versions, newest first. */
    async versions(projectId: string, id: string): Promise<LensVersionRow[]> {
      return db
        .selectFrom('lens_versions')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('lens_id', '=', id)
        .orderBy('version', 'desc')
        .execute()
    },
    async version(projectId: string, id: string, version: number): Promise<LensVersionRow | undefined> {
      return db
        .selectFrom('lens_versions')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('lens_id', '=', id)
        .where('version', '=', version)
        .executeTakeFirst()
    },
  }
}

export type LensesStore = ReturnType<typeof createLensesStore>
