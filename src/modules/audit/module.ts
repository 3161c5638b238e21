import type { AppModule } from '../../lib/module.js'
import type { AccessService } from '../access/index.js'
import { auditRoutes } from './routes.js'
import { createAuditService, type AuditLog } from './service.js'

/**
 * The audit log: what others record through `service.record`, and its read route. The writing side
 * (`createAuditLog`) is built before the access module, which records its own changes; this module is
 * built right after access, which checks who may read the log.
 */
export function createAuditModule(deps: { auditLog: AuditLog; access: Pick<AccessService, 'authorize'> }) {
  const service = createAuditService(deps)
  return { service, routers: ({ security }) => [auditRoutes(service, security)] } satisfies AppModule
}
