export { auditRoutes } from './routes.js'
export {
  createAuditLog,
  createAuditService,
  type AuditAction,
  type AuditEntry,
  type AuditLog,
  type AuditRecord,
  type AuditService,
} from './service.js'
export { createAuditModule } from './module.js'
