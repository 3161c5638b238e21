export { builtInRoles, PUBLIC, SUPER_ADMIN, VIEWER } from './built-in-roles.js'
export { decide, fitGrants, withinCapabilities, type CompiledGrant, type Decision, type RoleRules, type UnfitGrant } from './decide.js'
export { parsePermission, permissionCovers, type Permission } from './permission.js'
export { isKnownResource, knownResourceForms, parseCapability } from './resources.js'
export { accessRoutes } from './routes.js'
export {
  createAccessService, type AccessService, type DecideOptions, type Grant, type GrantFilterCheck, type GrantInput, type ResolvedDecision, type Role,
} from './service.js'
export { createAccessModule } from './module.js'
