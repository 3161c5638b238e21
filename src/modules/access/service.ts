import type { Kysely } from 'kysely'
import { createProjectCache } from '../../lib/cache/project-cache.js'
import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { resolveVariables, type FilterNode, type ResolvedFilterNode } from '../../lib/filter/index.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { AuditService } from '../audit/index.js'
import { builtInRoles, fixedRoles, PUBLIC } from './built-in-roles.js'
import { decide, fitGrants, intersectDecisions, reachesAny, type CompiledGrant, type Decision, type RoleRules } from './decide.js'
import { handOutRefusal } from './hand-out.js'
import { compileInput, compileStored, stripRules, toGrantRow, toRole, toWireGrant, type Grant, type GrantInput, type Role } from './grants.js'
import { parsePermission, type Permission } from './permission.js'
import { createAccessStore, type RoleRow } from './store.js'

export type { Grant, GrantInput, Role }

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

/**
 * Checks a grant's row filter, when the grant is saved, against the resource it names (one existing
 * collection); throws a 4xx AppError saying what is wrong, which the save turns into 422.
 */
export type GrantFilterCheck = (projectId: string, resource: string, filter: FilterNode) => Promise<void>

type LoadedRole = Role & { readonly grants: readonly CompiledGrant[]; readonly wireGrants: readonly Grant[] }

interface ProjectRoles {
  byId: Map<string, LoadedRole>
  byName: Map<string, LoadedRole>
}

export interface AccessDeps {
  systemDb: Kysely<any>
  clock: Clock
  pubsub: PubSub
  audit: Pick<AuditService, 'record'>
  log: Logger
  /** Checks a grant's row filter when the grant is saved (the modules that know the resources register it); none: only parsed. */
  checkGrantFilter?: GrantFilterCheck
}

const invalidationChannel = 'access.roles'
// Grants and resources already warned about; cleared past this size (a warning again is harmless).
const maxWarned = 10_000

/**
 * Roles, grants and the access decision. Every permission check in Plinth goes through `decide` (or
 * `authorize`, which throws). A project's roles are cached and dropped on every change, on every
 * instance (via pubsub), so a grant change applies to the very next request.
 */
export async function createAccessService(deps: AccessDeps) {
  const store = createAccessStore(deps.systemDb)
  const cache = await createProjectCache({ pubsub: deps.pubsub, channel: invalidationChannel, load: loadFromDb })
  const warned = new Set<string>()

  function load(projectId: string): Promise<ProjectRoles> {
    return cache.get(projectId)
  }

  function invalidate(projectId: string): Promise<void> {
    return cache.invalidate(projectId)
  }

  async function loadFromDb(projectId: string): Promise<ProjectRoles> {
    const roles = await store.rolesOf(projectId)
    const grants = await store.grantsOf(roles.map((r) => r.id))
    const byId = new Map<string, LoadedRole>()
    const byName = new Map<string, LoadedRole>()
    for (const row of roles) {
      const own = grants.filter((g) => g.role_id === row.id)
      const role: LoadedRole = Object.freeze({
        ...toRole(row),
        grants: own.map(compileStored),
        wireGrants: own.map(toWireGrant),
      })
      byId.set(row.id, role)
      byName.set(row.name, role)
    }
    return { byId, byName }
  }

  async function roleOf(principal: Principal): Promise<LoadedRole | null> {
    if (principal.roleId) {
      const home = await load(principal.homeProjectId)
      return home.byId.get(principal.roleId) ?? null
    }
    if (principal.kind === 'anonymous') return (await load(principal.projectId)).byName.get(PUBLIC) ?? null
    return null
  }

  /** The role whose grants apply to the caller where it acts: a role of another project never applies (only a super_admin acts outside its home project). */
  async function applyingRole(principal: Principal): Promise<LoadedRole | null> {
    const role = await roleOf(principal)
    return principal.projectId === principal.homeProjectId ? role : null
  }

  /** The decision with the row filter's variables still in place (as the role's grants say it). */
  async function decideUnresolved(principal: Principal, resource: string, action: string, options: DecideOptions = {}): Promise<Decision> {
    const applies = await applyingRole(principal)
    const requested = { resource, action }
    const fit = options.fitRowFilter
    return decide(principal, applies && fit ? fitted(principal, applies, requested, fit) : applies, requested)
  }

  /** The role with the filters of the grants covering the request fitted to the resource; a grant that does not fit is logged. */
  function fitted(principal: Principal, role: RoleRules, requested: Permission, fit: (filter: FilterNode) => FilterNode): RoleRules {
    const { role: fittedRole, unfit } = fitGrants(role, requested, fit)
    for (const { grant, reason } of unfit) warnUnfit(principal, role, grant, requested.resource, reason)
    return fittedRole
  }

  function warnUnfit(principal: Principal, role: RoleRules, grant: CompiledGrant, resource: string, reason: string): void {
    const key = `${role.id}|${grant.id ?? `${grant.resource}:${grant.action}`}|${resource}`
    if (warned.has(key)) return
    if (warned.size >= maxWarned) warned.clear()
    warned.add(key)
    deps.log.warn(
      { projectId: principal.homeProjectId, role: role.name, grant: `${grant.resource}:${grant.action}`, resource, reason },
      "a grant's item_filter cannot apply to this resource; the grant reaches none of its records until the filter or the schema is fixed",
    )
  }

  /** Throws validation_error (422, naming the grant and the field) for a row filter that does not fit the collection its grant names. */
  async function checkGrantFilters(projectId: string, grants: readonly CompiledGrant[]): Promise<void> {
    const check = deps.checkGrantFilter
    if (!check) return
    for (const [index, grant] of grants.entries()) {
      if (grant.itemFilter === null) continue
      try {
        await check(projectId, grant.resource, grant.itemFilter)
      } catch (err) {
        if (!isAppError(err) || err.status >= 500) throw err
        throw new AppError('validation_error', `grants[${index}].item_filter: ${err.message}`, { index, ...err.details })
      }
    }
  }

  /**
   * Checks a permission and returns the grant's row filter (variables resolved) and field allowlist. A capped
   * principal (a flow run under its publisher, decision 045) gets the intersection of its own decision and its
   * ceiling's: both must allow, rows both reach (each filter resolved for whom it belongs to), columns both hold.
   */
  async function decideFor(principal: Principal, resource: string, action: string, options: DecideOptions = {}): Promise<ResolvedDecision> {
    const own = await decideOwn(principal, resource, action, options)
    if (principal.ceiling === null || !own.allowed) return own
    return intersectDecisions(own, await decideFor(principal.ceiling, resource, action, options))
  }

  /** The decision for the principal's own rights, its ceiling left out. */
  async function decideOwn(principal: Principal, resource: string, action: string, options: DecideOptions): Promise<ResolvedDecision> {
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

  async function requireRole(projectId: string, id: string): Promise<LoadedRole> {
    const role = (await load(projectId)).byId.get(id)
    if (!role) throw new AppError('not_found', 'Role not found')
    return role
  }

  /** Admin access of the principal's own role and of every ceiling it has. */
  async function hasAdminAccess(principal: Principal): Promise<boolean> {
    return (await ownAdminAccess(principal)) && (principal.ceiling === null || (await hasAdminAccess(principal.ceiling)))
  }

  async function ownAdminAccess(principal: Principal): Promise<boolean> {
    if (principal.superAdmin) return true
    // System work administers its own project (decide.ts), never another one.
    if (principal.kind === 'system') return principal.projectId === principal.homeProjectId
    if (principal.kind === 'api_key' || principal.projectId !== principal.homeProjectId) return false
    return (await roleOf(principal))?.adminAccess ?? false
  }

  /**
   * Throws forbidden unless a caller without admin access holds every one of these grants at least as
   * widely: the permission itself, a row scope no wider (none held → any; else the same filter, or one of
   * the filters held), and no column beyond those held. Administrators may hand out anything.
   */
  async function assertMayHandOut(actor: Principal, grants: readonly CompiledGrant[]): Promise<void> {
    // A capped caller hands out only what it and every ceiling could each hand out.
    for (let layer: Principal | null = actor; layer !== null; layer = layer.ceiling) {
      if (await ownAdminAccess(layer)) continue
      for (const grant of grants) {
        const refusal = handOutRefusal(grant, await decideUnresolved(layer, grant.resource, grant.action))
        if (refusal === null) continue
        const permission = `${grant.resource}:${grant.action}`
        const why = refusal === 'permission' ? 'which you do not hold' : `on more ${refusal === 'rows' ? 'rows' : 'fields'} than you may reach yourself`
        throw new AppError('forbidden', `You cannot grant ${permission}, ${why}`, { resource: grant.resource, action: grant.action })
      }
    }
  }

  /**
   * Throws forbidden unless a caller without admin access could hand out everything the role holds (decision
   * 008): a role with admin access, or one holding a grant the caller does not hold as widely, is above the
   * caller, who may then neither assign it, act on its holders, nor change or delete it. `verb` says which.
   */
  async function assertWithinReach(actor: Principal, role: LoadedRole, verb: string): Promise<void> {
    if (await hasAdminAccess(actor)) return
    if (role.adminAccess) throw new AppError('forbidden', `Only an administrator may ${verb} the role ${role.name}`, { role: role.name })
    try {
      await assertMayHandOut(actor, role.grants)
    } catch (err) {
      if (isAppError(err) && err.code === 'forbidden') {
        throw new AppError('forbidden', `You may not ${verb} the role ${role.name}, which holds more than you do: ${err.message}`, { role: role.name, ...err.details })
      }
      throw err
    }
  }

  async function authorize(principal: Principal, permission: string): Promise<void> {
    if (permission === 'authenticated') {
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
      return
    }
    const { resource, action } = parsePermission(permission)
    const decision = await decideFor(principal, resource, action)
    if (decision.allowed) return
    if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
    throw new AppError('forbidden', `Missing permission ${resource}:${action}`, { resource, action })
  }

  return {
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
        if (!reachesAny(layer, await applyingRole(layer), { resource, action })) return false
      }
      return true
    },

    /**
     * The check at the service boundary (docs/permissions.md): every service method another module, a flow
     * step, a tool or a blueprint can reach calls it first with the acting principal and the permission its
     * route declares; the route's guard calls the same. Throws unauthorized (anonymous) or forbidden
     * (naming the permission) unless allowed.
     */
    authorize,

    /** Whether the caller is a super_admin or holds a role with admin access in the project it acts in. */
    hasAdminAccess,

    /** A role of the project by id, or null. */
    async roleById(projectId: string, id: string): Promise<Role | null> {
      return (await load(projectId)).byId.get(id) ?? null
    },

    /** A role of the project by name, or null. */
    async roleByName(projectId: string, name: string): Promise<Role | null> {
      return (await load(projectId)).byName.get(name) ?? null
    },

    /** Creates the built-in roles the project lacks, with their default grants. Idempotent. */
    async seedBuiltInRoles(projectId: string): Promise<void> {
      const existing = new Set((await store.rolesOf(projectId)).map((r) => r.name))
      const missing = builtInRoles.filter((r) => !existing.has(r.name))
      if (missing.length === 0) return
      const now = deps.clock.seconds()
      try {
        await store.transaction(async (trx) => {
          for (const spec of missing) {
            const id = newId()
            await store.insertRole(
              { id, project_id: projectId, name: spec.name, description: spec.description, admin_access: spec.adminAccess, built_in: true, created_at: now, updated_at: now },
              trx,
            )
            await store.replaceGrants(id, spec.grants.map((g, i) => toGrantRow(id, i, compileInput(g, i))), trx)
          }
        })
      } catch (err) {
        // Another instance seeded the same project at the same moment.
        if (!(isAppError(err) && err.code === 'already_exists')) throw err
      }
      await invalidate(projectId)
    },

    /** The roles of the project the caller acts in. Throws unauthorized, forbidden (system/roles:read). */
    async listRoles(actor: Principal): Promise<Role[]> {
      await authorize(actor, 'system/roles:read')
      return [...(await load(actor.projectId)).byId.values()].map(stripRules)
    },

    /** Creates a custom role. Throws invalid_request, already_exists, forbidden. */
    async createRole(actor: Principal, input: { name: string; description?: string; adminAccess?: boolean }): Promise<Role> {
      await authorize(actor, 'system/roles:create')
      const projectId = actor.projectId
      if (input.adminAccess && !(await hasAdminAccess(actor))) {
        throw new AppError('forbidden', 'Only an administrator may create a role with admin access')
      }
      const now = deps.clock.seconds()
      const row: RoleRow = {
        id: newId(),
        project_id: projectId,
        name: input.name,
        description: input.description ?? '',
        admin_access: input.adminAccess ?? false,
        built_in: false,
        created_at: now,
        updated_at: now,
      }
      try {
        await store.insertRole(row)
      } catch (err) {
        if (isAppError(err) && err.code === 'already_exists') throw new AppError('already_exists', `A role named "${input.name}" already exists`, { fields: ['name'] })
        throw err
      }
      await invalidate(projectId)
      await deps.audit.record({ projectId, action: 'role.created', actor, target: { type: 'role', id: row.id }, details: { name: row.name, adminAccess: Boolean(row.admin_access) } })
      return toRole(row)
    },

    /**
     * Renames or redescribes a role, or toggles admin access (not on built-in roles). Throws not_found,
     * invalid_request, already_exists, forbidden (admin access, or a role holding more than the caller).
     */
    async updateRole(actor: Principal, id: string, patch: { name?: string; description?: string; adminAccess?: boolean }): Promise<Role> {
      await authorize(actor, 'system/roles:update')
      const projectId = actor.projectId
      const role = await requireRole(projectId, id)
      if (role.builtIn && patch.name !== undefined && patch.name !== role.name) throw new AppError('invalid_request', 'Built-in roles cannot be renamed')
      if (role.builtIn && patch.adminAccess !== undefined && patch.adminAccess !== role.adminAccess) {
        throw new AppError('invalid_request', 'The admin access of a built-in role cannot change')
      }
      if (patch.adminAccess !== undefined && !(await hasAdminAccess(actor))) {
        throw new AppError('forbidden', 'Only an administrator may change admin access')
      }
      // A role above the caller is not the caller's to rename or redescribe (decision 012).
      await assertWithinReach(actor, role, 'change')
      const set = {
        updated_at: deps.clock.seconds(),
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.adminAccess !== undefined ? { admin_access: patch.adminAccess } : {}),
      }
      try {
        await store.updateRole(id, set)
      } catch (err) {
        if (isAppError(err) && err.code === 'already_exists') throw new AppError('already_exists', `A role named "${patch.name}" already exists`, { fields: ['name'] })
        throw err
      }
      await invalidate(projectId)
      await deps.audit.record({ projectId, action: 'role.updated', actor, target: { type: 'role', id }, details: { changed: Object.keys(patch) } })
      return stripRules({ ...role, name: set.name ?? role.name, description: set.description ?? role.description, adminAccess: set.admin_access ?? role.adminAccess, updatedAt: set.updated_at })
    },

    /** Deletes a custom role. Throws not_found, invalid_request (built-in), forbidden (a role holding more than the caller), conflict (assigned to users). */
    async deleteRole(actor: Principal, id: string): Promise<void> {
      await authorize(actor, 'system/roles:delete')
      const projectId = actor.projectId
      const role = await requireRole(projectId, id)
      if (role.builtIn) throw new AppError('invalid_request', 'Built-in roles cannot be deleted')
      await assertWithinReach(actor, role, 'delete')
      try {
        await store.deleteRole(id)
      } catch (err) {
        if (isAppError(err) && err.code === 'conflict') throw new AppError('conflict', 'The role is assigned to users; give them another role first')
        throw err
      }
      await invalidate(projectId)
      await deps.audit.record({ projectId, action: 'role.deleted', actor, target: { type: 'role', id }, details: { name: role.name } })
    },

    /** A role's grants, in their stored order. Throws unauthorized, forbidden (system/roles:read), not_found. */
    async grantsOf(actor: Principal, id: string): Promise<Grant[]> {
      await authorize(actor, 'system/roles:read')
      return [...(await requireRole(actor.projectId, id)).wireGrants]
    },

    /**
     * Replaces a role's grants. A bad grant is refused whole (400 for its shape or a resource Plinth does
     * not know, 422 for a bad item_filter, including one naming a field the collection it names lacks)
     * before anything is written. A caller without admin access may change only a role whose current grants
     * it could hand out, only to grants it holds itself, and never the grants of `public` (403).
     */
    async replaceGrants(actor: Principal, id: string, input: GrantInput[]): Promise<Grant[]> {
      await authorize(actor, 'system/roles:update')
      const projectId = actor.projectId
      const role = await requireRole(projectId, id)
      if (fixedRoles.has(role.name)) throw new AppError('invalid_request', `${role.name} holds every permission; its grants cannot be edited`)
      // public's grants apply to every anonymous caller: publishing rows or opening sign-up is an administrator's call.
      if (role.name === PUBLIC && !(await hasAdminAccess(actor))) {
        throw new AppError('forbidden', 'Only an administrator may change the grants of public, which apply to every anonymous caller', { role: role.name })
      }
      // Emptying a role above the caller would lift the protection of its holders (assertMayAssign): decision 012.
      await assertWithinReach(actor, role, 'change the grants of')
      if (input.length > 200) throw new AppError('invalid_request', 'At most 200 grants per role')
      const compiled = input.map((g, i) => compileInput(g, i))
      await checkGrantFilters(projectId, compiled)
      await assertMayHandOut(actor, compiled)
      await store.transaction((trx) => store.replaceGrants(id, compiled.map((g, i) => toGrantRow(id, i, g)), trx))
      await invalidate(projectId)
      await deps.audit.record({ projectId, action: 'grants.replaced', actor, target: { type: 'role', id }, details: { role: role.name, count: compiled.length } })
      return compiled.map((g) => ({ resource: g.resource, action: g.action, item_filter: g.rawFilter, fields: g.fields ? [...g.fields] : null }))
    },

    /**
     * Throws forbidden unless the caller may give someone this role (or act on someone who holds it): a
     * caller without admin access only a role without admin access whose every grant it holds at least as
     * widely. Throws not_found for an unknown role.
     */
    async assertMayAssign(actor: Principal, projectId: string, roleId: string): Promise<void> {
      if (await hasAdminAccess(actor)) return
      await assertWithinReach(actor, await requireRole(projectId, roleId), 'act on')
    },

    /**
     * Removes every grant naming exactly this resource from the project's roles (the resource is gone,
     * e.g. a collection whose database was deleted): a later resource of the same name starts with none.
     * Returns how many grants were removed.
     */
    async dropGrantsOn(projectId: string, resource: string): Promise<number> {
      const roleIds = (await store.rolesOf(projectId)).map((r) => r.id)
      const removed = await store.deleteGrantsOn(roleIds, resource)
      if (removed > 0) await invalidate(projectId)
      return removed
    },

    /** Which permissions of a list the caller lacks (for API key capabilities). */
    async missingPermissions(principal: Principal, permissions: readonly string[]): Promise<string[]> {
      const missing: string[] = []
      for (const p of permissions) {
        const { resource, action } = parsePermission(p)
        if (!(await decideFor(principal, resource, action)).allowed) missing.push(p)
      }
      return missing
    },

    async close(): Promise<void> {
      await cache.close()
    },
  }
}

export type AccessService = Awaited<ReturnType<typeof createAccessService>>

