import type { AppModule } from '../../lib/module.js'
import { blueprintsRoutes } from './routes.js'
import { createBlueprintsService } from './service.js'

/** Blueprints: whole applications as one Markdown document (docs/blueprints.md, decision 068). */
export function createBlueprintsModule() {
  const service = createBlueprintsService()
  return {
    service,
    routers: ({ security }) => [blueprintsRoutes(service, security)],
  } satisfies AppModule
}
