import type { AppModule } from '../../lib/module.js'
import type { Observers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { SearchIndexSeam } from '../records/index.js'
import type { FieldReference, FieldReferenceQuery } from '../collections/index.js'
import { createSearchIndexFieldReferences } from './field-references.js'
import { createIndexFiles } from './files.js'
import { searchIndexesRoutes } from './routes.js'
import { createSearchIndexesService, type SearchIndexesDeps } from './service.js'
import { createSearchIndexesStore } from './store.js'

/** The service's deps, with what its built files need in place of the files themselves. */
export interface SearchIndexesModuleDeps extends Omit<SearchIndexesDeps, 'files'> {
  /** Object storage (the platform's, as files use): where built files go. */
  storage: ObjectStorage
  /** DATA_DIR: this instance's copies of built files. */
  dataDir: string
  /** The records module's seam: imports and truncates ask which indexes went stale; finalize?rebuild=true starts rebuilds. */
  searchIndexSeam: SearchIndexSeam
  /** The collections module's onRemoved: removed collections leave the indexes drawing from them. */
  removedCollections: Observers<[actor: Principal, projectId: string, names: readonly string[]]>
  /** The collections module's field references: indexes name fields in their sources (decision 062). */
  fieldReferences: Observers<[query: FieldReferenceQuery, found: FieldReference[]]>
  fieldRenamed: Observers<[query: FieldReferenceQuery, to: string]>
}

/** Search indexes (decision 042): CRUD, builds into SQLite FTS5 files in object storage, queries over them, staleness. */
export function createSearchIndexesModule(deps: SearchIndexesModuleDeps) {
  const files = createIndexFiles({ storage: deps.storage, dataDir: deps.dataDir, log: deps.log })
  const service = createSearchIndexesService({ ...deps, files })
  deps.searchIndexSeam.onStale.add(
    async (projectId, collection, found) => void found.push(...(await service.markStale(projectId, collection))),
  )
  deps.searchIndexSeam.onRebuild.add(
    async (actor, collection, found) => void found.push(...(await service.rebuildDependents(actor, collection))),
  )
  deps.removedCollections.add(async (_actor, projectId, names) => service.removeCollections(projectId, names))
  const references = createSearchIndexFieldReferences({
    store: createSearchIndexesStore(deps.systemDb),
    now: () => deps.clock.now(),
  })
  deps.fieldReferences.add(references.find)
  deps.fieldRenamed.add(references.rename)
  return {
    service,
    routers: ({ security }) => [searchIndexesRoutes(service, security)],
    async close() {
      await service.close()
      files.close()
    },
  } satisfies AppModule
}
