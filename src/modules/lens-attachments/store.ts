import type { Kysely } from 'kysely'
import { projectRows } from '../../lib/db/project-rows.js'

export interface LensAttachmentRow {
  id: string
  project_id: string
  lens_id: string
  collection: string
  placement: string
  label: string
  created_by: string | null
  created_at: number
  updated_at: number
}

export type LensAttachmentChanges = Partial<Pick<LensAttachmentRow, 'placement' | 'label' | 'updated_at'>>

type Tables = { lens_attachments: LensAttachmentRow }

/** SQL for `lens_attachments`; this module is its only owner. Every function takes the project first. */
export function createLensAttachmentsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  const rows = projectRows<LensAttachmentRow>(db, 'lens_attachments')
  return {
    ...rows,
    /** A page in collection, placement and label order; `collection` narrows it. */
    list(projectId: string, page: number, limit: number, collection?: string) {
      return rows.list(projectId, page, limit, ['collection', 'placement', 'label'], { collection })
    },
    /** Removes a deleted lens's attachments. */
    async deleteForLens(projectId: string, lensId: string): Promise<void> {
      await db
        .deleteFrom('lens_attachments')
        .where('project_id', '=', projectId)
        .where('lens_id', '=', lensId)
        .execute()
    },
    /** Removes the attachments of collections that are gone. */
    async deleteForCollections(projectId: string, names: readonly string[]): Promise<void> {
      if (names.length === 0) return
      await db
        .deleteFrom('lens_attachments')
        .where('project_id', '=', projectId)
        .where('collection', 'in', [...names])
        .execute()
    },
  }
}
