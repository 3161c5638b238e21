import type { AppModule } from '../../lib/module.js'
import { lensesRoutes } from './routes.js'
import { createLensesService, type LensesDeps } from './service.js'

/** Lenses: named, parameterised collection queries rendered as html, csv or md, with published versions (docs/lenses.md). */
export function createLensesModule(deps: LensesDeps) {
  const service = createLensesService(deps)
  return {
    service,
    routers: ({ security }) => [lensesRoutes(service, security)],
  } satisfies AppModule
}
