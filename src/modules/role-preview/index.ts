export { createRolePreviewModule } from './module.js'
export type { RolePreview, RolePreviewService } from './service.js'
