import type { AppModule } from '../../lib/module.js'
import { navigationRoutes } from './routes.js'
import { createNavigationService, type NavigationDeps } from './service.js'

/** The navigation tree: the project's shared menu, filtered per caller by what its items point at (docs/navigation.md). */
export function createNavigationModule(deps: NavigationDeps) {
  const service = createNavigationService(deps)
  return {
    service,
    routers: ({ security }) => [navigationRoutes(service, security)],
  } satisfies AppModule
}
