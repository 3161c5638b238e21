import type { JobQueue } from '../../lib/queue/index.js'
import type { AppModule } from '../../lib/module.js'
import { blueprintExportRoutes } from './export/routes.js'
import { installRoutes } from './install/routes.js'
import { blueprintsRoutes } from './routes.js'
import { createBlueprintsService, type BlueprintsDeps } from './service.js'

/** Blueprints: whole applications as one Markdown document (docs/blueprints.md, decisions 068-070). */
export async function createBlueprintsModule(deps: BlueprintsDeps & { queue: JobQueue }) {
  const service = createBlueprintsService(deps)
  // The hourly maintenance tick (spec: Events): install runs unspoken for an hour become partial.
  const jobs = await deps.queue.define<{ sweep: Record<string, never> }>('blueprint-installs', {
    concurrency: 1,
    handlers: { sweep: async () => void (await service.sweep()) },
  })
  await jobs.schedule('blueprint-installs-sweep', { pattern: '0 * * * *', job: 'sweep', data: {} })
  return {
    service,
    routers: ({ security }) => [
      blueprintsRoutes(service, security),
      installRoutes(service, security),
      blueprintExportRoutes(service, security),
    ],
  } satisfies AppModule
}
