export { auditRoutes } from './routes.js'
export { createAuditService, type AuditAction, type AuditEntry, type AuditRecord, type AuditService } from './service.js'
export { createAuditModule } from './module.js'
