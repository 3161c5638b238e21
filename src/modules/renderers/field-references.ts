import type { Kysely } from 'kysely'
import { mentionsField, type FieldReference, type FieldReferenceQuery } from '../collections/index.js'

type Tables = { renderers: { id: string; project_id: string; name: string; collection: string; template: string } }

/**
 * Renderers of a collection whose template names one of its fields: a drop is refused while one does, a
 * rename reports it (a template is text; decision 062).
 */
export function createRendererFieldReferences(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return async (query: FieldReferenceQuery, found: FieldReference[]): Promise<void> => {
    const rows = await db
      .selectFrom('renderers')
      .select(['id', 'name', 'template'])
      .where('project_id', '=', query.projectId)
      .where('collection', '=', query.collection)
      .execute()
    for (const row of rows)
      if (mentionsField(row.template, query.field))
        found.push({ kind: 'renderer', id: row.id, name: `renderer ${row.name}`, updatable: false })
  }
}
