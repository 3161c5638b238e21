import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { Logger } from '../../lib/log.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { AuditService } from '../audit/index.js'
import { createDecider } from './decider.js'
import type { Role } from './grants.js'
import { createRoleAdmin, type GrantFilterCheck } from './role-admin.js'
import { createRoleCache } from './role-cache.js'
import { createGrantFieldReferences } from './field-references.js'
import { createAccessStore } from './store.js'
import { createReachChecks } from './within-reach.js'

export interface AccessDeps {
  systemDb: Kysely<any>
  clock: Clock
  pubsub: PubSub
  audit: Pick<AuditService, 'record'>
  log: Logger
  /** Checks a grant's row filter when the grant is saved (the modules that know the resources register it); none: only parsed. */
  checkGrantFilter?: GrantFilterCheck
}

/**
 * Roles, grants and the access decision. Every permission check in Plinth goes through `decide` (or
 * `authorize`, which throws). A project's roles are cached and dropped on every change, on every
 * instance (via pubsub), so a grant change applies to the very next request.
 */
export async function createAccessService(deps: AccessDeps) {
  const store = createAccessStore(deps.systemDb)
  const roles = await createRoleCache({ store, pubsub: deps.pubsub, log: deps.log })
  const decider = createDecider({ roles, clock: deps.clock, log: deps.log })
  const reach = createReachChecks({ roles, decider })
  const admin = createRoleAdmin({ ...deps, store, roles, decider, reach })

  return {
    decide: decider.decide,
    reachesAny: decider.reachesAny,
    authorize: decider.authorize,
    hasAdminAccess: decider.hasAdminAccess,
    missingPermissions: decider.missingPermissions,
    assertMayAssign: reach.assertMayAssign,
    ...admin,
    /** Grants that name a collection's field: found for drops and renames, rewritten by renames (decision 062). */
    grantFieldReferences: createGrantFieldReferences({ store, invalidate: roles.invalidate }),

    /** A role of the project by id, or null. */
    async roleById(projectId: string, id: string): Promise<Role | null> {
      return (await roles.load(projectId)).byId.get(id) ?? null
    },

    /** A role of the project by name, or null. */
    async roleByName(projectId: string, name: string): Promise<Role | null> {
      return (await roles.load(projectId)).byName.get(name) ?? null
    },

    async close(): Promise<void> {
      await roles.close()
    },
  }
}

export type AccessService = Awaited<ReturnType<typeof createAccessService>>
