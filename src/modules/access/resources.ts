import { AppError } from '../../lib/errors.js'
import { parsePermission, type Permission } from './permission.js'

/**
 * The resources Plinth checks, in one place: a grant or an API key capability naming anything else could
 * never match a request (`books:read` would be a key that is 403 on everything), so it is refused when it
 * is saved. Requests themselves are checked against whatever is stored (`decide`): a grant stored before
 * this list existed keeps matching exactly what it matched before.
 */

/** `system/<name>`: what the routes and services of the project's own machinery check. */
export const systemResources = [
  'api-keys',
  'audit-log',
  // Blueprints (issue 30): read plans a document (and, later, lists installs); installing needs each brick's own rights too.
  'blueprints',
  // Reserved for the automation module (flows); the editor role holds it by default.
  'automate',
  // File containers (decision 066): read (list, get), create, update, delete.
  'containers',
  'databases',
  'files',
  // Lens attachments (issue 29, decision 065): which lens a collection offers on a record or a list.
  'lens-attachments',
  // Lenses (issue 17, item 5): read renders, create/update/delete manage; publish is update.
  'lenses',
  // The navigation tree (decision 064): read answers the caller's tree; create/update/delete edit the menu.
  'navigation',
  // Renderers (issue 29, decision 065): read lists and renders, create/update/delete manage.
  'renderers',
  'roles',
  // Search indexes (decision 042): read (list, get, query), create, update, delete, execute (build).
  'search-indexes',
  'settings',
  'storage-connections',
  'users',
  // Saved views (decision 063): read (see, list through), create (personal views), update/delete (shared ones).
  'views',
  // Collection webhooks (core-api § Events).
  'webhooks',
] as const

/** `instance/<name>`: resources spanning every project, reachable by a super_admin alone. */
export const instanceResources = ['projects'] as const

// One collection, as named in a path (the collections module's stricter name rule applies when it is created).
const collectionName = /^[a-z0-9_-]{1,100}$/

/**
 * Whether a resource names something Plinth checks: `*`; `collections/*` or `collections/<name>`;
 * `schema/*`; `system/*` or one of `systemResources`; `instance/*` or one of `instanceResources`.
 */
export function isKnownResource(resource: string): boolean {
  if (resource === '*') return true
  const slash = resource.indexOf('/')
  if (slash < 0) return false
  const prefix = resource.slice(0, slash)
  const rest = resource.slice(slash + 1)
  switch (prefix) {
    case 'collections':
      return rest === '*' || collectionName.test(rest)
    case 'schema':
      return rest === '*'
    case 'system':
      return rest === '*' || (systemResources as readonly string[]).includes(rest)
    case 'instance':
      return rest === '*' || (instanceResources as readonly string[]).includes(rest)
    default:
      return false
  }
}

/** The resource forms, as docs and error messages name them. */
export const knownResourceForms = [
  '*',
  'collections/*',
  'collections/<name>',
  'schema/*',
  'system/*',
  ...systemResources.map((r) => `system/${r}`),
  'instance/*',
  ...instanceResources.map((r) => `instance/${r}`),
].join(', ')

/**
 * Parses a permission about to be stored (an API key capability): `resource:action`, well formed and
 * naming a resource Plinth knows. Throws invalid_request naming it.
 */
export function parseCapability(value: string): Permission {
  const permission = parsePermission(value)
  if (!isKnownResource(permission.resource)) {
    throw new AppError(
      'invalid_request',
      `"${value.slice(0, 100)}" names no resource Plinth knows (${knownResourceForms})`,
      {
        capability: value.slice(0, 100),
      },
    )
  }
  return permission
}
