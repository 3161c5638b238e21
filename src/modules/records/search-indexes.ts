import { createObservers, type Observers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'

/**
 * The seam between records and search indexes (decision 042). Search indexes are built from records, so
 * their module is built after this one; it registers here at its own construction (no late binding), and
 * records ask through `dependents` without knowing that module. Each listener adds the names it handled
 * to `found`.
 */
export interface SearchIndexSeam {
  /** An import or a truncate changed the collection's records: mark the indexes drawing from it stale. */
  readonly onStale: Observers<[projectId: string, collection: string, found: string[]]>
  /** finalize?rebuild=true: start rebuilding, as the actor, the indexes drawing from the collection. */
  readonly onRebuild: Observers<[actor: Principal, collection: string, found: string[]]>
}

/** What records call: the names of the indexes concerned, sorted; none while no search index module listens. */
export interface DependentIndexes {
  markStale(projectId: string, collection: string): Promise<string[]>
  rebuild(actor: Principal, collection: string): Promise<string[]>
}

export function createSearchIndexSeam(): { seam: SearchIndexSeam; dependents: DependentIndexes } {
  const stale = createObservers<[projectId: string, collection: string, found: string[]]>()
  const rebuild = createObservers<[actor: Principal, collection: string, found: string[]]>()
  const names = (found: string[]) => [...new Set(found)].sort()
  return {
    seam: { onStale: { add: stale.add }, onRebuild: { add: rebuild.add } },
    dependents: {
      async markStale(projectId, collection) {
        const found: string[] = []
        await stale.notify(projectId, collection, found)
        return names(found)
      },
      async rebuild(actor, collection) {
        const found: string[] = []
        await rebuild.notify(actor, collection, found)
        return names(found)
      },
    },
  }
}
