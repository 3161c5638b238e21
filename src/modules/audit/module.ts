import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import { auditRoutes } from './routes.js'
import { createAuditService } from './service.js'

/** The audit log: what others record through `service.record`, and its read route. */
export function createAuditModule(deps: { systemDb: Kysely<any>; clock: Clock; log: Logger }) {
  const service = createAuditService(deps)
  return { service, routers: ({ security }) => [auditRoutes(service, security)] } satisfies AppModule
}
