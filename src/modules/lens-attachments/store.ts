import type { Kysely } from 'kysely'

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
  return {
    async list(
      projectId: string,
      page: number,
      limit: number,
      collection?: string,
    ): Promise<{ rows: LensAttachmentRow[]; total: number }> {
      let base = db.selectFrom('lens_attachments').where('project_id', '=', projectId)
      if (collection !== undefined) base = base.where('collection', '=', collection)
      const [rows, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('collection')
          .orderBy('placement')
          .orderBy('label')
          .orderBy('id')
          .limit(limit)
          .offset((page - 1) * limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
      ])
      return { rows, total: Number(count?.n ?? 0) }
    },
    async byId(projectId: string, id: string): Promise<LensAttachmentRow | undefined> {
      return db
        .selectFrom('lens_attachments')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    async insert(row: LensAttachmentRow): Promise<void> {
      await db.insertInto('lens_attachments').values(row).execute()
    },
    /** False when the row is gone. */
    async update(projectId: string, id: string, changes: LensAttachmentChanges): Promise<boolean> {
      const result = await db
        .updateTable('lens_attachments')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('lens_attachments')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
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
