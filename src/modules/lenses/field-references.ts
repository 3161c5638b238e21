import type { Kysely } from 'kysely'
import { mentionsField, type FieldReference, type FieldReferenceQuery } from '../collections/index.js'
import type { LensRow, LensVersionRow } from './store.js'

type Tables = { lenses: LensRow; lens_versions: LensVersionRow }

/**
 * Lenses over a collection that name one of its fields (in the draft or the published version: filter,
 * sort, columns, params, template). Reported, never rewritten: a published version is a record of what was
 * published, and a template is free text. Decision 062.
 */
export function createLensFieldReferences(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return async (query: FieldReferenceQuery, found: FieldReference[]): Promise<void> => {
    const lenses = await db.selectFrom('lenses').selectAll().where('project_id', '=', query.projectId).execute()
    const published = await db
      .selectFrom('lens_versions')
      .innerJoin('lenses', (join) =>
        join
          .onRef('lenses.id', '=', 'lens_versions.lens_id')
          .onRef('lenses.current_version', '=', 'lens_versions.version'),
      )
      .select(['lens_versions.lens_id as id', 'lens_versions.definition as definition'])
      .where('lens_versions.project_id', '=', query.projectId)
      .execute()
    const definitions = new Map<string, string[]>()
    for (const lens of lenses) definitions.set(lens.id, [lens.draft])
    for (const row of published) definitions.get(row.id)?.push(row.definition)
    for (const lens of lenses) {
      const names = (definitions.get(lens.id) ?? []).some((text) => {
        const { collection, ...rest } = JSON.parse(text) as { collection?: unknown }
        return collection === query.collection && mentionsField(JSON.stringify(rest), query.field)
      })
      if (names) found.push({ kind: 'lens', id: lens.id, name: `lens ${lens.name}`, updatable: false })
    }
  }
}
