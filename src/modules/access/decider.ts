import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { resolveVariables, type FilterNode, type ResolvedFilterNode } from '../../lib/filter/index.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import {
  decide,
  fitGrants,
  intersectDecisions,
  reachesAny,
  type CompiledGrant,
  type Decision,
  type RoleRules,
} from './decide.js'
import { parsePermission, type Permission } from './permission.js'
import type { RoleCache } from './role-cache.js'

/** A decision with the row filter's variables already resolved for this caller. */
export interface ResolvedDecision {
  readonly allowed: boolean
  readonly itemFilter: ResolvedFilterNode | null
  readonly fields: readonly string[] | null
}

/** Options of one decision. */
export interface DecideOptions {
  /**
   * Fits a grant's row filter to the resource decided on (a collection's schema): returns it checked,
   * possibly converted, or throws a 4xx AppError when it cannot apply there. Such a grant then matches no
   * row and opens no column (fail closed) and a warning is logged once per grant and resource.
   */
  readonly fitRowFilter?: (filter: FilterNode) => FilterNode
}

// Grants and resources already warned about; cleared past this size (a warning again is harmless).
const maxWarned = 10_000

/**
 * The access decision for a principal: `decide` (decide.ts) over the role that applies where it acts,
 * intersected with its ceiling's, the row filter's variables resolved for it. Every permission check in
 * Plinth goes through here.
 */
export function createDecider(deps: { roles: RoleCache; clock: Clock; log: Logger }) {
  const { roles } = deps
  const warned = new Set<string>()

  /** The decision with the row filter's variables still in place (as the role's grants say it). */
  async function decideUnresolved(
    principal: Principal,
    resource: string,
    action: string,
    options: DecideOptions = {},
  ): Promise<Decision> {
    const applies = await roles.applyingRole(principal)
    const requested = { resource, action }
    const fit = options.fitRowFilter
    return decide(principal, applies && fit ? fitted(principal, applies, requested, fit) : applies, requested)
  }

  /** The role with the filters of the grants covering the request fitted to the resource; a grant that does not fit is logged. */
  function fitted(
    principal: Principal,
    role: RoleRules,
    requested: Permission,
    fit: (filter: FilterNode) => FilterNode,
  ): RoleRules {
    const { role: fittedRole, unfit } = fitGrants(role, requested, fit)
    for (const { grant, reason } of unfit) warnUnfit(principal, role, grant, requested.resource, reason)
    return fittedRole
  }

  function warnUnfit(
    principal: Principal,
    role: RoleRules,
    grant: CompiledGrant,
    resource: string,
    reason: string,
  ): void {
    const key = `${role.id}|${grant.id ?? `${grant.resource}:${grant.action}`}|${resource}`
    if (warned.has(key)) return
    if (warned.size >= maxWarned) warned.clear()
    warned.add(key)
    deps.log.warn(
      {
        projectId: principal.homeProjectId,
        role: role.name,
        grant: `${grant.resource}:${grant.action}`,
        resource,
        reason,
      },
      "a grant's item_filter cannot apply to this resource; the grant reaches none of its records until the filter or the schema is fixed",
    )
  }

  /**
   * Checks a permission and returns the grant's row filter (variables resolved) and field allowlist. A capped
   * principal (a flow run under its publisher, decision 045) gets the intersection of its own decision and its
   * ceiling's: both must allow, rows both reach (each filter resolved for whom it belongs to), columns both hold.
   */
  async function decideFor(
    principal: Principal,
    resource: string,
    action: string,
    options: DecideOptions = {},
  ): Promise<ResolvedDecision> {
    const own = await decideOwn(principal, resource, action, options)
    if (principal.ceiling === null || !own.allowed) return own
    return intersectDecisions(own, await decideFor(principal.ceiling, resource, action, options))
  }

  /** The decision for the principal's own rights, its ceiling left out. */
  async function decideOwn(
    principal: Principal,
    resource: string,
    action: string,
    options: DecideOptions,
  ): Promise<ResolvedDecision> {
    const decision = await decideUnresolved(principal, resource, action, options)
    if (!decision.allowed || decision.itemFilter === null) return decision as ResolvedDecision
    const now = deps.clock.seconds()
    const itemFilter = resolveVariables(decision.itemFilter, {
      userId: principal.userId,
      role: principal.roleName,
      projectId: principal.projectId,
      now,
    })
    return { allowed: true, itemFilter, fields: decision.fields }
  }

  /** Admin access of the principal's own role and of every ceiling it has. */
  async function hasAdminAccess(principal: Principal): Promise<boolean> {
    return (
      (await ownAdminAccess(principal)) && (principal.ceiling === null || (await hasAdminAccess(principal.ceiling)))
    )
  }

  async function ownAdminAccess(principal: Principal): Promise<boolean> {
    if (principal.superAdmin) return true
    // System work administers its own project (decide.ts), never another one.
    if (principal.kind === 'system') return principal.projectId === principal.homeProjectId
    if (principal.kind === 'api_key' || principal.projectId !== principal.homeProjectId) return false
    return (await roles.roleOf(principal))?.adminAccess ?? false
  }

  return {
    decideUnresolved,

    /**
     * The decision for `resource:action`. With `fitRowFilter`, each covering grant's row filter is fitted to
     * the resource first, and a grant whose filter cannot apply there reaches nothing (logged once).
     */
    decide: decideFor,

    /**
     * Whether the caller may do the action on at least one resource a wildcard covers (`collections/*`: some
     * collection, through a grant on it or on all); row filters play no part.
     */
    async reachesAny(principal: Principal, resource: string, action: string): Promise<boolean> {
      for (let layer: Principal | null = principal; layer !== null; layer = layer.ceiling) {
        if (!reachesAny(layer, await roles.applyingRole(layer), { resource, action })) return false
      }
      return true
    },

    /**
     * The check at the service boundary (docs/permissions.md): every service method another module, a flow
     * step, a tool or a blueprint can reach calls it first with the acting principal and the permission its
     * route declares; the route's guard calls the same. Throws unauthorized (anonymous) or forbidden
     * (naming the permission) unless allowed.
     */
    async authorize(principal: Principal, permission: string): Promise<void> {
      if (permission === 'authenticated') {
        if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
        return
      }
      const { resource, action } = parsePermission(permission)
      const decision = await decideFor(principal, resource, action)
      if (decision.allowed) return
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
      throw new AppError('forbidden', `Missing permission ${resource}:${action}`, { resource, action })
    },

    /** Whether the caller is a super_admin or holds a role with admin access in the project it acts in. */
    hasAdminAccess,

    /** Admin access of the principal's own role, its ceiling left out. */
    ownAdminAccess,

    /** Which permissions of a list the caller lacks (for API key capabilities). */
    async missingPermissions(principal: Principal, permissions: readonly string[]): Promise<string[]> {
      const missing: string[] = []
      for (const p of permissions) {
        const { resource, action } = parsePermission(p)
        if (!(await decideFor(principal, resource, action)).allowed) missing.push(p)
      }
      return missing
    },
  }
}

export type Decider = ReturnType<typeof createDecider>
