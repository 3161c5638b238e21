import type { Clock } from '../../lib/clock.js'
import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import type { AccessService } from '../access/index.js'
import { createOperationRegistry } from './registry.js'
import { operationsRoutes } from './routes.js'
import { createOperationsService } from './service.js'

export interface OperationsModuleDeps {
  readonly access: Pick<AccessService, 'authorize'>
  /** Not read yet: operations get the run's clock through their context; kept for catalog entries that will. */
  readonly clock: Clock
  readonly log: Logger
}

/** The operations catalog: the registry flows and runs use, and GET /api/v1/automate/operations[/:type]. */
export function createOperationsModule(deps: OperationsModuleDeps) {
  const service = createOperationsService({ access: deps.access, registry: createOperationRegistry() })
  return { service, routers: ({ security }) => [operationsRoutes(service, security)] } satisfies AppModule
}
