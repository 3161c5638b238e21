import type { AppModule } from '../../lib/module.js'
import type { Observers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import { renderersRoutes } from './routes.js'
import { createRenderersService, type RenderersDeps } from './service.js'

export interface RenderersModuleDeps extends RenderersDeps {
  /** The collections module's onRemoved: a renderer goes with its collection. */
  removedCollections: Observers<[actor: Principal, projectId: string, names: readonly string[]]>
}

/** Renderers: named presentation templates for one collection's records (docs/renderers.md). */
export function createRenderersModule(deps: RenderersModuleDeps) {
  const service = createRenderersService(deps)
  deps.removedCollections.add(async (_actor, projectId, names) => service.removeCollections(projectId, names))
  return {
    service,
    routers: ({ security }) => [renderersRoutes(service, security)],
  } satisfies AppModule
}
