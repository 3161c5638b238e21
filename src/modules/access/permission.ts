import { AppError } from '../../lib/errors.js'

/** Actions a grant or a capability may name (core-api.md § Authentication, 6). */
export const actions = [
  'read',
  'create',
  'update',
  'delete',
  'write',
  'manage',
  'execute',
  'transfer',
  'hard_delete',
  'view_deleted',
  'purge_deleted',
] as const
export type Action = (typeof actions)[number]

export interface Permission {
  readonly resource: string
  readonly action: string
}

// `collections/articles`, `collections/*`, `system/files`, `schema/*`, or `*` for everything.
const resourcePattern = /^(\*|[a-z][a-z0-9_-]*(\/([a-z0-9_-]+|\*))*)$/

/** True when `resource` is a well-formed resource pattern. */
export function isResource(resource: string): boolean {
  return resource.length <= 200 && resourcePattern.test(resource)
}

/** Parses `resource:action` (the action after the last colon). Throws invalid_request. */
export function parsePermission(value: string): Permission {
  const at = value.lastIndexOf(':')
  const resource = value.slice(0, at)
  const action = value.slice(at + 1)
  if (at <= 0 || !isResource(resource) || !(actions as readonly string[]).includes(action)) {
    throw new AppError('invalid_request', `"${value.slice(0, 100)}" is not a permission (resource:action)`, {
      permission: value.slice(0, 100),
    })
  }
  return { resource, action }
}

/**
 * Whether a grant's resource covers a requested one: equal, `*`, or a trailing `/*` covering everything
 * below its prefix (`collections/*` covers `collections/articles`, and the literal `schema/*`).
 * A wildcard request is covered only by a wildcard at least as wide.
 */
export function resourceCovers(granted: string, requested: string): boolean {
  if (granted === '*' || granted === requested) return true
  if (granted.endsWith('/*')) return requested.startsWith(granted.slice(0, -1))
  return false
}

/** Whether a granted action implies the requested one: `manage` implies all, `write` create/update/delete. */
export function actionImplies(granted: string, requested: string): boolean {
  if (granted === requested || granted === 'manage') return true
  return granted === 'write' && (requested === 'create' || requested === 'update' || requested === 'delete')
}

/** Whether a permission covers another (both resource and action). */
export function permissionCovers(granted: Permission, requested: Permission): boolean {
  return resourceCovers(granted.resource, requested.resource) && actionImplies(granted.action, requested.action)
}
