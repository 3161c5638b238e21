import type { FieldReference, FieldReferenceQuery } from '../collections/index.js'
import type { SearchIndexSource } from './schemas.js'
import type { SearchIndexesStore } from './store.js'

/**
 * Search indexes name fields in their sources: a drop is refused while one does, and a rename rewrites the
 * source (which marks the index stale: its built file still holds the values, under no field name, and is
 * served until the next build). Decision 062.
 */
export function createSearchIndexFieldReferences(deps: { store: SearchIndexesStore; now: () => number }) {
  const { store } = deps
  const naming = async (query: FieldReferenceQuery) =>
    (await store.list(query.projectId)).filter((row) =>
      (JSON.parse(row.sources) as SearchIndexSource[]).some(
        (s) => s.collection === query.collection && s.fields.includes(query.field),
      ),
    )
  return {
    async find(query: FieldReferenceQuery, found: FieldReference[]): Promise<void> {
      for (const row of await naming(query))
        found.push({ kind: 'search_index', id: row.id, name: `search index ${row.name}`, updatable: true })
    },
    async rename(query: FieldReferenceQuery, to: string): Promise<void> {
      for (const row of await naming(query)) {
        const sources = (JSON.parse(row.sources) as SearchIndexSource[]).map((s) =>
          s.collection === query.collection ? { ...s, fields: s.fields.map((f) => (f === query.field ? to : f)) } : s,
        )
        await store.update(query.projectId, row.id, { sources: JSON.stringify(sources), updated_at: deps.now() })
      }
    },
  }
}
