import type { Kysely } from 'kysely'
import { mentionsField, type FieldReference, type FieldReferenceQuery } from '../collections/index.js'

type Tables = { views: { id: string; project_id: string; name: string; collection: string; definition: string } }

/**
 * Saved views of a collection whose definition (filter, sort, columns, search, layout options) names one
 * of its fields: a drop is refused while one does, a rename reports it (decision 062). Personal views
 * count too: they would fail when listed.
 */
export function createViewFieldReferences(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return async (query: FieldReferenceQuery, found: FieldReference[]): Promise<void> => {
    const rows = await db
      .selectFrom('views')
      .select(['id', 'name', 'definition'])
      .where('project_id', '=', query.projectId)
      .where('collection', '=', query.collection)
      .execute()
    for (const row of rows)
      if (mentionsField(row.definition, query.field))
        found.push({ kind: 'view', id: row.id, name: `view ${row.name}`, updatable: false })
  }
}
