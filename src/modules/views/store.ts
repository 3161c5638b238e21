import type { Kysely } from 'kysely'

export interface ViewRow {
  id: string
  project_id: string
  collection: string
  name: string
  shared: boolean | number
  owner_id: string | null
  /** `shared`, or `user:<id>` for a personal view: names are unique within one. */
  name_scope: string
  /** JSON: the ViewDefinition. */
  definition: string
  created_at: number
  updated_at: number
}

export type ViewChanges = Partial<Pick<ViewRow, 'name' | 'shared' | 'name_scope' | 'definition' | 'updated_at'>>

type Tables = { views: ViewRow }

/** SQL for `views`; this module is its only owner. Every function takes the project first. */
export function createViewsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  /** The views a user sees: the shared ones and their own (a caller with no user sees the shared ones). */
  const visible = (projectId: string, userId: string | null) => {
    const base = db.selectFrom('views').where('project_id', '=', projectId)
    return base.where((eb) =>
      userId === null ? eb('shared', '=', true) : eb.or([eb('shared', '=', true), eb('owner_id', '=', userId)]),
    )
  }
  return {
    async list(
      projectId: string,
      userId: string | null,
      filter: { collection?: string },
      page: number,
      limit: number,
    ): Promise<{ rows: ViewRow[]; total: number }> {
      let base = visible(projectId, userId)
      if (filter.collection !== undefined) base = base.where('collection', '=', filter.collection)
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
    /** A view the user sees (shared, or their own); undefined otherwise. */
    async visibleById(projectId: string, userId: string | null, id: string): Promise<ViewRow | undefined> {
      return visible(projectId, userId).selectAll().where('id', '=', id).executeTakeFirst()
    },
    async insert(row: ViewRow): Promise<void> {
      await db.insertInto('views').values(row).execute()
    },
    /** False when the row is gone. */
    async update(projectId: string, id: string, changes: ViewChanges): Promise<boolean> {
      const result = await db
        .updateTable('views')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('views')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
    /** Removes every view (personal or shared) of removed collections. */
    async removeCollections(projectId: string, names: readonly string[]): Promise<void> {
      if (names.length === 0) return
      await db
        .deleteFrom('views')
        .where('project_id', '=', projectId)
        .where('collection', 'in', [...names])
        .execute()
    },
  }
}

export type ViewsStore = ReturnType<typeof createViewsStore>
