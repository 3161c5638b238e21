import { orNode, type FilterNode } from '../../lib/filter/index.js'
import type { Principal } from '../../lib/principal.js'
import { parsePermission, permissionCovers, type Permission } from './permission.js'

export interface CompiledGrant {
  readonly resource: string
  readonly action: string
  /** Row scope; null means every row. Variables are resolved per request. */
  readonly itemFilter: FilterNode | null
  /** Readable and writable columns; null means all. */
  readonly fields: readonly string[] | null
}

export interface RoleRules {
  readonly id: string
  readonly name: string
  readonly adminAccess: boolean
  readonly grants: readonly CompiledGrant[]
}

export interface Decision {
  readonly allowed: boolean
  /** The rows the caller may touch (OR of the matching grants' filters); null = all rows. */
  readonly itemFilter: FilterNode | null
  /** The columns the caller may read and write (union of the matching grants); null = all columns. */
  readonly fields: readonly string[] | null
}

const deny: Decision = Object.freeze({ allowed: false, itemFilter: null, fields: null })
const allowAll: Decision = Object.freeze({ allowed: true, itemFilter: null, fields: null })

/**
 * The one access decision (addendum §3), pure so that a table can test it:
 * - an API key is first bounded by its own capabilities; a service key (no user) has exactly those;
 * - a super_admin may do anything anywhere; a role with admin access anything in its project (but
 *   not `instance/…` resources, which only a super_admin reaches);
 * - otherwise the role's grants that cover the request decide, and their row filters and field
 *   allowlists combine: any unrestricted grant lifts the restriction, else filters are ORed and
 *   allowlists united.
 * `role` is the role whose grants apply (the user's, the key creator's, or `public`).
 */
export function decide(principal: Principal, role: RoleRules | null, requested: Permission): Decision {
  if (principal.kind === 'api_key') {
    const capabilities = (principal.capabilities ?? []).map(parsePermission)
    if (!capabilities.some((c) => permissionCovers(c, requested))) return deny
    if (principal.userId === null) return allowAll
  }
  if (principal.superAdmin) return allowAll
  if (!role) return deny
  // `instance/…` resources (projects) span every project: beyond any project role, admins included.
  if (requested.resource.startsWith('instance/')) return deny
  if (role.adminAccess) return allowAll

  const matching = role.grants.filter((g) => permissionCovers(g, requested))
  if (matching.length === 0) return deny
  const filters = matching.map((g) => g.itemFilter)
  const itemFilter = filters.some((f) => f === null) ? null : filters.length === 1 ? filters[0]! : orNode(filters as FilterNode[])
  const allowlists = matching.map((g) => g.fields)
  const fields = allowlists.some((f) => f === null) ? null : [...new Set(allowlists.flatMap((f) => f ?? []))]
  return Object.freeze({ allowed: true, itemFilter, fields })
}
