import type { AppModule } from '../../lib/module.js'
import { blueprintExportRoutes } from './export/routes.js'
import { blueprintsRoutes } from './routes.js'
import { createBlueprintsService, type BlueprintsDeps } from './service.js'

/** Blueprints: whole applications as one Markdown document (docs/blueprints.md, decisions 068, 069). */
export function createBlueprintsModule(deps: BlueprintsDeps) {
  const service = createBlueprintsService(deps)
  return {
    service,
    routers: ({ security }) => [blueprintsRoutes(service, security), blueprintExportRoutes(deps, security)],
  } satisfies AppModule
}
