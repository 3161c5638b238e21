import { createProjectCache } from '../../lib/cache/project-cache.js'
import { AppError } from '../../lib/errors.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import { PUBLIC } from './built-in-roles.js'
import type { CompiledGrant } from './decide.js'
import { compileStored, toRole, toWireGrant, type Grant, type Role } from './grants.js'
import type { AccessStore } from './store.js'

/** A role with its grants compiled for deciding and as they go on the wire. */
export type LoadedRole = Role & { readonly grants: readonly CompiledGrant[]; readonly wireGrants: readonly Grant[] }

interface ProjectRoles {
  byId: Map<string, LoadedRole>
  byName: Map<string, LoadedRole>
}

const invalidationChannel = 'access.roles'

/**
 * A project's roles with their grants compiled, cached per project and dropped on every change, on every
 * instance (via pubsub), so a grant change applies to the very next request.
 */
export async function createRoleCache(deps: { store: AccessStore; pubsub: PubSub; log: Logger }) {
  const { store } = deps
  const cache = await createProjectCache({ pubsub: deps.pubsub, channel: invalidationChannel, load: loadFromDb })

  async function loadFromDb(projectId: string): Promise<ProjectRoles> {
    const roles = await store.rolesOf(projectId)
    const grants = await store.grantsOf(roles.map((r) => r.id))
    const byId = new Map<string, LoadedRole>()
    const byName = new Map<string, LoadedRole>()
    for (const row of roles) {
      const own = grants.filter((g) => g.role_id === row.id)
      const role: LoadedRole = Object.freeze({
        ...toRole(row),
        grants: own.map((grant) =>
          compileStored(grant, (reason) =>
            deps.log.warn(
              { projectId, roleId: row.id, grantId: grant.id, reason },
              "a stored grant's item_filter cannot be read; the grant reaches no records until the role is saved again",
            ),
          ),
        ),
        wireGrants: own.map(toWireGrant),
      })
      byId.set(row.id, role)
      byName.set(row.name, role)
    }
    return { byId, byName }
  }

  function load(projectId: string): Promise<ProjectRoles> {
    return cache.get(projectId)
  }

  async function roleOf(principal: Principal): Promise<LoadedRole | null> {
    if (principal.roleId) {
      const home = await load(principal.homeProjectId)
      return home.byId.get(principal.roleId) ?? null
    }
    if (principal.kind === 'anonymous') return (await load(principal.projectId)).byName.get(PUBLIC) ?? null
    return null
  }

  return {
    load,

    /** Drops the project's roles here and on every instance; resolves once all have dropped them. */
    invalidate(projectId: string): Promise<void> {
      return cache.invalidate(projectId)
    },

    /** The caller's own role (in its home project; `public` for an anonymous caller), or null. */
    roleOf,

    /** The role whose grants apply to the caller where it acts: a role of another project never applies (only a super_admin acts outside its home project). */
    async applyingRole(principal: Principal): Promise<LoadedRole | null> {
      const role = await roleOf(principal)
      return principal.projectId === principal.homeProjectId ? role : null
    },

    /** A role of the project by id. Throws not_found. */
    async requireRole(projectId: string, id: string): Promise<LoadedRole> {
      const role = (await load(projectId)).byId.get(id)
      if (!role) throw new AppError('not_found', 'Role not found')
      return role
    },

    close(): Promise<void> {
      return cache.close()
    },
  }
}

export type RoleCache = Awaited<ReturnType<typeof createRoleCache>>
