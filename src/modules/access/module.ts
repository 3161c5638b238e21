import type { AppModule } from '../../lib/module.js'
import { createObservers } from '../../lib/observers.js'
import { accessRoutes } from './routes.js'
import { createAccessService, type AccessDeps } from './service.js'

/**
 * Roles, grants and the access decision. A grant's row filter is checked when saved by the modules that
 * know the resource it names; they are built after access and register at their own construction
 * (`grantFilterChecks.add`), since collections need access to decide who sees them.
 */
export async function createAccessModule(deps: Omit<AccessDeps, 'checkGrantFilter'>) {
  const grantFilterChecks = createObservers<Parameters<NonNullable<AccessDeps['checkGrantFilter']>>>()
  const service = await createAccessService({ ...deps, checkGrantFilter: grantFilterChecks.notify })
  return {
    service,
    grantFilterChecks: { add: grantFilterChecks.add },
    routers: ({ security }) => [accessRoutes(service, security)],
    close: () => service.close(),
  } satisfies AppModule
}
