import type { AppModule } from '../../lib/module.js'
import type { Observers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import { viewsRoutes } from './routes.js'
import { createViewsService, type ViewsDeps } from './service.js'

export interface ViewsModuleDeps extends ViewsDeps {
  /** The collections module's onRemoved: a view goes with its collection (and so with a database deleted with cascade). */
  removedCollections: Observers<[actor: Principal, projectId: string, names: readonly string[]]>
}

/** Saved views: named, reusable ways to look at one collection, personal or shared, read as the caller (docs/views.md). */
export function createViewsModule(deps: ViewsModuleDeps) {
  const service = createViewsService(deps)
  deps.removedCollections.add(async (_actor, projectId, names) => service.removeCollections(projectId, names))
  return {
    service,
    routers: ({ security }) => [viewsRoutes(service, security)],
  } satisfies AppModule
}
