import type { AppModule } from '../../lib/module.js'
import { createObservers } from '../../lib/observers.js'
import { lensesRoutes } from './routes.js'
import { createLensesService, type LensesDeps } from './service.js'

/** Lenses: named, parameterised collection queries rendered as html, csv or md, with published versions (docs/lenses.md). */
export function createLensesModule(deps: Omit<LensesDeps, 'deleted'>) {
  // Modules built later hear of a deleted lens here (lens attachments go with it).
  const deleted = createObservers<[projectId: string, lensId: string]>()
  const service = createLensesService({ ...deps, deleted: deleted.notify })
  return {
    service,
    onDeleted: { add: deleted.add },
    routers: ({ security }) => [lensesRoutes(service, security)],
  } satisfies AppModule
}
