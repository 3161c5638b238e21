export { builtInRoles, PUBLIC, SUPER_ADMIN, VIEWER } from './built-in-roles.js'
export {
  decide,
  fitGrants,
  withinCapabilities,
  type CompiledGrant,
  type Decision,
  type RoleRules,
  type UnfitGrant,
} from './decide.js'
export { parsePermission, permissionCovers, type Permission } from './permission.js'
export { isKnownResource, knownResourceForms, parseCapability } from './resources.js'
export { accessRoutes } from './routes.js'
export type { DecideOptions, ResolvedDecision } from './decider.js'
export type { Grant, GrantInput, Role } from './grants.js'
export type { GrantFilterCheck } from './role-admin.js'
export { createAccessService, type AccessService } from './service.js'
export { createAccessModule } from './module.js'
export { grantsCreateShape, roleCreateShape } from './create-shape.js'
/** The role and grants bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateRoleSchema, ReplaceGrantsSchema, UpdateRoleSchema } from './schemas.js'
