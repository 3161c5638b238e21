import type { AppModule } from '../../lib/module.js'
import { systemRoutes } from './routes.js'
import { createSystemService, type SystemFacts } from './service.js'

/** What the server says about itself (version, backends), and its health routes. */
export function createSystemModule(facts: SystemFacts) {
  const service = createSystemService(facts)
  return { service, routers: () => [systemRoutes(service)] } satisfies AppModule
}
