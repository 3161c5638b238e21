import type { Kysely } from 'kysely'

export interface RendererRow {
  id: string
  project_id: string
  name: string
  collection: string
  kind: string
  template: string
  created_by: string | null
  created_at: number
  updated_at: number
}

export type RendererChanges = Partial<Pick<RendererRow, 'name' | 'collection' | 'kind' | 'template' | 'updated_at'>>

type Tables = { renderers: RendererRow }

/** SQL for `renderers`; this module is its only owner. Every function takes the project first. */
export function createRenderersStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(
      projectId: string,
      page: number,
      limit: number,
      collection?: string,
    ): Promise<{ rows: RendererRow[]; total: number }> {
      let base = db.selectFrom('renderers').where('project_id', '=', projectId)
      if (collection !== undefined) base = base.where('collection', '=', collection)
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
    async byId(projectId: string, id: string): Promise<RendererRow | undefined> {
      return db
        .selectFrom('renderers')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    async insert(row: RendererRow): Promise<void> {
      await db.insertInto('renderers').values(row).execute()
    },
    /** False when the row is gone. */
    async update(projectId: string, id: string, changes: RendererChanges): Promise<boolean> {
      const result = await db
        .updateTable('renderers')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('renderers')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
    /** Removes the renderers of collections that are gone; the count removed. */
    async deleteForCollections(projectId: string, names: readonly string[]): Promise<number> {
      if (names.length === 0) return 0
      const result = await db
        .deleteFrom('renderers')
        .where('project_id', '=', projectId)
        .where('collection', 'in', [...names])
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}
