import type { AppModule } from '../../lib/module.js'
import { auditRoutes } from './routes.js'
import { createAuditService, type AuditLog, type AuditReadCheck } from './service.js'

/**
 * The audit log: what others record through `service.record`, and its read route. The writing side
 * (`createAuditLog`) is built before the access module, which records its own changes; this module is
 * built right after access, whose `authorize` checks who may read the log (passed in, not imported).
 */
export function createAuditModule(deps: { auditLog: AuditLog; access: AuditReadCheck }) {
  const service = createAuditService(deps)
  return { service, routers: ({ security }) => [auditRoutes(service, security)] } satisfies AppModule
}
