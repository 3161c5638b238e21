import type { AppModule } from '../../lib/module.js'
import { settingsRoutes } from './routes.js'
import { createSettingsService } from './service.js'

/** Project settings, cached per project and dropped everywhere on change. */
export async function createSettingsModule(deps: Parameters<typeof createSettingsService>[0]) {
  const service = await createSettingsService(deps)
  return {
    service,
    routers: ({ security }) => [settingsRoutes(service, security)],
    close: () => service.close(),
  } satisfies AppModule
}
