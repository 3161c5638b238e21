import type { AppModule } from '../../lib/module.js'
import { rolePreviewRoutes } from './routes.js'
import { createRolePreviewService, type RolePreviewDeps } from './service.js'

/** "What can this role see" (docs/permissions.md): built after records, whose list it reads through. */
export function createRolePreviewModule(deps: RolePreviewDeps) {
  const service = createRolePreviewService(deps)
  return {
    service,
    routers: ({ security }) => [rolePreviewRoutes(service, security)],
  } satisfies AppModule
}
