import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import type { FilterNode } from '../../lib/filter/index.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { AuditService } from '../audit/index.js'
import { builtInRoles, fixedRoles, PUBLIC } from './built-in-roles.js'
import type { CompiledGrant } from './decide.js'
import type { Decider } from './decider.js'
import { compileInput, stripRules, toGrantRow, toRole, type Grant, type GrantInput, type Role } from './grants.js'
import type { RoleCache } from './role-cache.js'
import type { AccessStore, RoleRow } from './store.js'
import type { ReachChecks } from './within-reach.js'

/**
 * Checks a grant's row filter, when the grant is saved, against the resource it names (one existing
 * collection); throws a 4xx AppError saying what is wrong, which the save turns into 422.
 */
export type GrantFilterCheck = (projectId: string, resource: string, filter: FilterNode) => Promise<void>

export interface RoleAdminDeps {
  store: AccessStore
  roles: RoleCache
  decider: Decider
  reach: ReachChecks
  clock: Clock
  audit: Pick<AuditService, 'record'>
  /** Checks a grant's row filter when the grant is saved (the modules that know the resources register it); none: only parsed. */
  checkGrantFilter?: GrantFilterCheck
}

/**
 * Changing roles and their grants: the built-in roles seeded, custom roles created, changed and deleted,
 * grants replaced whole. Every change is checked against the caller's reach, dropped from every instance's
 * cache before it answers, and audited.
 */
export function createRoleAdmin(deps: RoleAdminDeps) {
  const { store, roles, decider, reach } = deps

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
        throw new AppError('validation_error', `grants[${index}].item_filter: ${err.message}`, {
          index,
          ...err.details,
        })
      }
    }
  }

  return {
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
              {
                id,
                project_id: projectId,
                name: spec.name,
                description: spec.description,
                admin_access: spec.adminAccess,
                built_in: true,
                created_at: now,
                updated_at: now,
              },
              trx,
            )
            await store.replaceGrants(
              id,
              spec.grants.map((g, i) => toGrantRow(id, i, compileInput(g, i))),
              trx,
            )
          }
        })
      } catch (err) {
        // Another instance seeded the same project at the same moment.
        if (!(isAppError(err) && err.code === 'already_exists')) throw err
      }
      await roles.invalidate(projectId)
    },

    /** The roles of the project the caller acts in. Throws unauthorized, forbidden (system/roles:read). */
    async listRoles(actor: Principal): Promise<Role[]> {
      await decider.authorize(actor, 'system/roles:read')
      return [...(await roles.load(actor.projectId)).byId.values()].map(stripRules)
    },

    /** Creates a custom role. Throws invalid_request, already_exists, forbidden. */
    async createRole(
      actor: Principal,
      input: { name: string; description?: string; adminAccess?: boolean },
    ): Promise<Role> {
      await decider.authorize(actor, 'system/roles:create')
      const projectId = actor.projectId
      if (input.adminAccess && !(await decider.hasAdminAccess(actor))) {
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
        if (isAppError(err) && err.code === 'already_exists')
          throw new AppError('already_exists', `A role named "${input.name}" already exists`, { fields: ['name'] })
        throw err
      }
      await roles.invalidate(projectId)
      await deps.audit.record({
        projectId,
        action: 'role.created',
        actor,
        target: { type: 'role', id: row.id },
        details: { name: row.name, adminAccess: Boolean(row.admin_access) },
      })
      return toRole(row)
    },

    /**
     * Renames or redescribes a role, or toggles admin access (not on built-in roles). Throws not_found,
     * invalid_request, already_exists, forbidden (admin access, or a role holding more than the caller).
     */
    async updateRole(
      actor: Principal,
      id: string,
      patch: { name?: string; description?: string; adminAccess?: boolean },
    ): Promise<Role> {
      await decider.authorize(actor, 'system/roles:update')
      const projectId = actor.projectId
      const role = await roles.requireRole(projectId, id)
      if (role.builtIn && patch.name !== undefined && patch.name !== role.name)
        throw new AppError('invalid_request', 'Built-in roles cannot be renamed')
      if (role.builtIn && patch.adminAccess !== undefined && patch.adminAccess !== role.adminAccess) {
        throw new AppError('invalid_request', 'The admin access of a built-in role cannot change')
      }
      if (patch.adminAccess !== undefined && !(await decider.hasAdminAccess(actor))) {
        throw new AppError('forbidden', 'Only an administrator may change admin access')
      }
      // A role above the caller is not the caller's to rename or redescribe (decision 012).
      await reach.assertWithinReach(actor, role, 'change')
      const set = {
        updated_at: deps.clock.seconds(),
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.adminAccess !== undefined ? { admin_access: patch.adminAccess } : {}),
      }
      try {
        await store.updateRole(id, set)
      } catch (err) {
        if (isAppError(err) && err.code === 'already_exists')
          throw new AppError('already_exists', `A role named "${patch.name}" already exists`, { fields: ['name'] })
        throw err
      }
      await roles.invalidate(projectId)
      await deps.audit.record({
        projectId,
        action: 'role.updated',
        actor,
        target: { type: 'role', id },
        details: { changed: Object.keys(patch) },
      })
      return stripRules({
        ...role,
        name: set.name ?? role.name,
        description: set.description ?? role.description,
        adminAccess: set.admin_access ?? role.adminAccess,
        updatedAt: set.updated_at,
      })
    },

    /** Deletes a custom role. Throws not_found, invalid_request (built-in), forbidden (a role holding more than the caller), conflict (assigned to users). */
    async deleteRole(actor: Principal, id: string): Promise<void> {
      await decider.authorize(actor, 'system/roles:delete')
      const projectId = actor.projectId
      const role = await roles.requireRole(projectId, id)
      if (role.builtIn) throw new AppError('invalid_request', 'Built-in roles cannot be deleted')
      await reach.assertWithinReach(actor, role, 'delete')
      try {
        await store.deleteRole(id)
      } catch (err) {
        if (isAppError(err) && err.code === 'conflict')
          throw new AppError('conflict', 'The role is assigned to users; give them another role first')
        throw err
      }
      await roles.invalidate(projectId)
      await deps.audit.record({
        projectId,
        action: 'role.deleted',
        actor,
        target: { type: 'role', id },
        details: { name: role.name },
      })
    },

    /** A role's grants, in their stored order. Throws unauthorized, forbidden (system/roles:read), not_found. */
    async grantsOf(actor: Principal, id: string): Promise<Grant[]> {
      await decider.authorize(actor, 'system/roles:read')
      return [...(await roles.requireRole(actor.projectId, id)).wireGrants]
    },

    /**
     * Replaces a role's grants. A bad grant is refused whole (400 for its shape or a resource Plinth does
     * not know, 422 for a bad item_filter, including one naming a field the collection it names lacks)
     * before anything is written. A caller without admin access may change only a role whose current grants
     * it could hand out, only to grants it holds itself, and never the grants of `public` (403).
     */
    async replaceGrants(actor: Principal, id: string, input: GrantInput[]): Promise<Grant[]> {
      await decider.authorize(actor, 'system/roles:update')
      const projectId = actor.projectId
      const role = await roles.requireRole(projectId, id)
      if (fixedRoles.has(role.name))
        throw new AppError('invalid_request', `${role.name} holds every permission; its grants cannot be edited`)
      // public's grants apply to every anonymous caller: publishing rows or opening sign-up is an administrator's call.
      if (role.name === PUBLIC && !(await decider.hasAdminAccess(actor))) {
        throw new AppError(
          'forbidden',
          'Only an administrator may change the grants of public, which apply to every anonymous caller',
          { role: role.name },
        )
      }
      // Emptying a role above the caller would lift the protection of its holders (assertMayAssign): decision 012.
      await reach.assertWithinReach(actor, role, 'change the grants of')
      if (input.length > 200) throw new AppError('invalid_request', 'At most 200 grants per role')
      const compiled = input.map((g, i) => compileInput(g, i))
      await checkGrantFilters(projectId, compiled)
      await reach.assertMayHandOut(actor, compiled)
      await store.transaction((trx) =>
        store.replaceGrants(
          id,
          compiled.map((g, i) => toGrantRow(id, i, g)),
          trx,
        ),
      )
      await roles.invalidate(projectId)
      await deps.audit.record({
        projectId,
        action: 'grants.replaced',
        actor,
        target: { type: 'role', id },
        details: { role: role.name, count: compiled.length },
      })
      return compiled.map((g) => ({
        resource: g.resource,
        action: g.action,
        item_filter: g.rawFilter,
        fields: g.fields ? [...g.fields] : null,
      }))
    },

    /**
     * Removes every grant naming exactly this resource from the project's roles (the resource is gone,
     * e.g. a collection whose database was deleted): a later resource of the same name starts with none.
     * Returns how many grants were removed.
     */
    async dropGrantsOn(projectId: string, resource: string): Promise<number> {
      const roleIds = (await store.rolesOf(projectId)).map((r) => r.id)
      const removed = await store.deleteGrantsOn(roleIds, resource)
      if (removed > 0) await roles.invalidate(projectId)
      return removed
    },
  }
}

export type RoleAdmin = ReturnType<typeof createRoleAdmin>
