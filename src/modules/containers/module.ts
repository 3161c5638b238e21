import type { AppModule } from '../../lib/module.js'
import { containersRoutes } from './routes.js'
import { createContainersService, type ContainersDeps } from './service.js'

/** File containers: named places for files with the rules an upload into them follows (docs/containers.md). */
export function createContainersModule(deps: ContainersDeps) {
  const service = createContainersService(deps)
  return {
    service,
    routers: ({ security }) => [containersRoutes(service, security)],
  } satisfies AppModule
}
