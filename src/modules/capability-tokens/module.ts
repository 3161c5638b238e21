import type { AppModule } from '../../lib/module.js'
import { capabilityTokensRoutes } from './routes.js'
import { createCapabilityTokensService, type CapabilityTokensDeps } from './service.js'

/** Signed, short-lived tokens for one record; nothing is stored. */
export function createCapabilityTokensModule(deps: CapabilityTokensDeps) {
  const service = createCapabilityTokensService(deps)
  return { service, routers: ({ security }) => [capabilityTokensRoutes(service, security)] } satisfies AppModule
}
