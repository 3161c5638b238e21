import type { Kysely } from 'kysely'
import { projectRows } from '../../lib/db/project-rows.js'

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
  const rows = projectRows<RendererRow>(db, 'renderers')
  return {
    ...rows,
    /** A page in name order; `collection` narrows it. */
    list(projectId: string, page: number, limit: number, collection?: string) {
      return rows.list(projectId, page, limit, ['name'], { collection })
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
