import { isAppError } from '../../lib/errors.js'
import { andNode, matchNone, orNode, type FilterNode, type Operand } from '../../lib/filter/index.js'
import type { Principal } from '../../lib/principal.js'
import { actionImplies, parsePermission, permissionCovers, resourceCovers, type Permission } from './permission.js'

export interface CompiledGrant {
  /** The stored grant's id (a new one whenever a role's grants are replaced); absent before it is saved. */
  readonly id?: string
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
 * - an API key is first bounded by its own capabilities (`withinCapabilities`, the key's ceiling); a
 *   service key (no user) has exactly those;
 * - system work (maintenance Plinth starts itself) may do anything in its own project but `instance/…`;
 * - a super_admin may do anything anywhere; a role with admin access anything in its project (but
 *   not `instance/…` resources, which only a super_admin reaches);
 * - otherwise the role's grants that cover the request decide, and their row filters and field
 *   allowlists combine: any unrestricted grant lifts the restriction, else filters are ORed and
 *   allowlists united.
 * `role` is the role whose grants apply (the user's, the key creator's, or `public`).
 */
export function decide(principal: Principal, role: RoleRules | null, requested: Permission): Decision {
  if (principal.kind === 'system') return systemMay(principal, requested) ? allowAll : deny
  if (principal.kind === 'api_key') {
    if (!withinCapabilities(principal, requested)) return deny
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
  const itemFilter = filters.some((f) => f === null)
    ? null
    : filters.length === 1
      ? filters[0]!
      : orNode(filters as FilterNode[])
  const allowlists = matching.map((g) => g.fields)
  const fields = allowlists.some((f) => f === null) ? null : [...new Set(allowlists.flatMap((f) => f ?? []))]
  return Object.freeze({ allowed: true, itemFilter, fields })
}

/**
 * The ceiling of an API key, the one place its capabilities are read: whether one of them covers the
 * request (`covers` says how; `permissionCovers` by default). True for every caller that is not a key.
 * A key never reaches beyond its capabilities, whatever its creator's role, shares included.
 */
export function withinCapabilities(
  principal: Principal,
  requested: Permission,
  covers: (capability: Permission, requested: Permission) => boolean = permissionCovers,
): boolean {
  if (principal.kind !== 'api_key') return true
  return (principal.capabilities ?? []).some((c) => covers(parsePermission(c), requested))
}

/** System work acts like an administrator of its own project, and never on `instance/…` (other projects). */
function systemMay(principal: Principal, requested: Permission): boolean {
  return principal.projectId === principal.homeProjectId && !requested.resource.startsWith('instance/')
}

/**
 * Whether `decide` allows the action on at least one resource the requested wildcard covers
 * (`collections/*`: some collection): as `decide`, except that a grant (or capability) below the wildcard
 * counts too (`collections/posts:read` reaches `collections/*`). Row filters play no part. Tells "this
 * caller may read some collections" from "none at all", e.g. to ask an anonymous caller to sign in.
 */
export function reachesAny(principal: Principal, role: RoleRules | null, requested: Permission): boolean {
  const reaches = (p: Permission, r: Permission = requested) =>
    permissionCovers(p, r) || (resourceCovers(r.resource, p.resource) && actionImplies(p.action, r.action))
  if (principal.kind === 'system') return systemMay(principal, requested)
  if (principal.kind === 'api_key') {
    if (!withinCapabilities(principal, requested, reaches)) return false
    if (principal.userId === null) return true
  }
  if (principal.superAdmin) return true
  if (!role) return false
  if (requested.resource.startsWith('instance/')) return false
  if (role.adminAccess) return true
  return role.grants.some((g) => reaches(g))
}

/** A grant whose row filter does not fit the resource decided on, and why (for the log, never the caller). */
export interface UnfitGrant {
  readonly grant: CompiledGrant
  readonly reason: string
}

/**
 * The role with the row filter of every grant covering `requested` fitted to the resource by `fit` (checked
 * against a collection's schema, and converted), for `decide` to combine. `fit` throws a 4xx AppError for a
 * filter that cannot apply there (a wildcard grant naming a field this collection lacks); such a grant
 * keeps its permission but reaches no row and no column, so it adds nothing to the grants it is ORed with
 * and lifts none of their restrictions (fail closed). Other errors propagate. The role is returned as is
 * when nothing changed.
 */
export function fitGrants(
  role: RoleRules,
  requested: Permission,
  fit: (filter: FilterNode) => FilterNode,
): { role: RoleRules; unfit: UnfitGrant[] } {
  if (role.adminAccess) return { role, unfit: [] }
  const unfit: UnfitGrant[] = []
  let changed = false
  const grants = role.grants.map((grant): CompiledGrant => {
    if (grant.itemFilter === null || !permissionCovers(grant, requested)) return grant
    try {
      const itemFilter = fit(grant.itemFilter)
      if (itemFilter === grant.itemFilter) return grant
      changed = true
      return Object.freeze({ ...grant, itemFilter })
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err
      unfit.push({ grant, reason: err.message })
      changed = true
      return Object.freeze({ ...grant, itemFilter: matchNone(), fields: [] })
    }
  })
  return { role: changed ? { ...role, grants } : role, unfit }
}

/**
 * Two decisions at once (a capped principal's own and its ceiling's, decision 045): allowed by both, the rows
 * both reach (AND of the filters; null is every row), the columns both hold (null is all).
 */
export function intersectDecisions<O extends Operand>(a: DecisionOf<O>, b: DecisionOf<O>): DecisionOf<O> {
  if (!a.allowed || !b.allowed) return { allowed: false, itemFilter: null, fields: null }
  const itemFilter =
    a.itemFilter === null ? b.itemFilter : b.itemFilter === null ? a.itemFilter : andNode([a.itemFilter, b.itemFilter])
  const fields =
    a.fields === null ? b.fields : b.fields === null ? a.fields : a.fields.filter((f) => b.fields!.includes(f))
  return { allowed: true, itemFilter, fields }
}

/** A decision whose row filter holds operands of type O (variables, or resolved literals). */
export interface DecisionOf<O extends Operand> {
  readonly allowed: boolean
  readonly itemFilter: FilterNode<O> | null
  readonly fields: readonly string[] | null
}
