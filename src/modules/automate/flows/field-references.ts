import type { Kysely } from 'kysely'
import { mentionsField, type FieldReference, type FieldReferenceQuery } from '../../collections/index.js'
import type { FlowRow, FlowVersionRow } from './store.js'

type Tables = { flows: FlowRow; flow_versions: FlowVersionRow }

/**
 * Flows that touch a collection (its name in their trigger or a step's config, or in their collections)
 * and name one of its fields in that text: the draft or the published version. Reported, never
 * rewritten: step configs are templates and expressions, where a word may or may not be the field.
 * Decision 062.
 */
export function createFlowFieldReferences(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return async (query: FieldReferenceQuery, found: FieldReference[]): Promise<void> => {
    const flows = await db.selectFrom('flows').selectAll().where('project_id', '=', query.projectId).execute()
    const published = await db
      .selectFrom('flow_versions')
      .innerJoin('flows', (join) =>
        join
          .onRef('flows.id', '=', 'flow_versions.flow_id')
          .onRef('flows.published_version', '=', 'flow_versions.version'),
      )
      .select(['flow_versions.flow_id as id', 'flow_versions.snapshot as snapshot'])
      .where('flow_versions.project_id', '=', query.projectId)
      .execute()
    const snapshots = new Map(published.map((row) => [row.id, row.snapshot]))
    const collection = JSON.stringify(query.collection)
    for (const flow of flows) {
      const texts = [`${flow.trigger_config}\n${flow.operations}\n${flow.collections}`, snapshots.get(flow.id) ?? '']
      const names = texts.some((text) => text.includes(collection) && mentionsField(text, query.field))
      if (names) found.push({ kind: 'flow', id: flow.id, name: `flow ${flow.name}`, updatable: false })
    }
  }
}
