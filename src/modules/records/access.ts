import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import { parsePermission, permissionCovers, type AccessService } from '../access/index.js'
import type { Collection } from '../collections/index.js'
import { recordScope, shareCovers, type RecordScope, type ShareAccess } from './scope.js'
import type { SharesStore } from './shares-store.js'

const shareLevels: readonly ShareAccess[] = ['view', 'comment', 'edit']

/**
 * An API key reaches only what its capabilities name, shares included: a share opens a record to its
 * person, and a key of that person only when the key may do that action on that collection at all.
 */
function keyCovers(principal: Principal, resource: string, action: string): boolean {
  if (principal.kind !== 'api_key') return true
  return (principal.capabilities ?? []).some((c) => permissionCovers(parsePermission(c), { resource, action }))
}

/** The record scope of a caller for one action on one collection: grants, preset, and shares together. */
export function createRecordAccess(deps: { access: AccessService; shares: SharesStore }) {
  return {
    async scope(principal: Principal, collection: Collection, action: string): Promise<RecordScope & { admin: boolean }> {
      const decision = await deps.access.decide(principal, `collections/${collection.name}`, action)
      const admin = await deps.access.hasAdminAccess(principal)
      const preset = collection.accessControl?.preset ?? 'team'
      const sharing = collection.accessControl?.sharing === true
      const levels = shareLevels.filter((level) => shareCovers(level, action))
      const sharedIds =
        sharing && levels.length > 0 && principal.userId && principal.kind !== 'anonymous' && keyCovers(principal, `collections/${collection.name}`, action)
          ? await deps.shares.recordIdsFor(collection.id, principal.userId, levels)
          : []
      // A service key (no user) acts for the system: owner scoping has no owner to narrow to.
      const unnarrowed = admin || (principal.kind === 'api_key' && principal.userId === null)
      return { ...recordScope({ principal, action, decision, preset, sharing, admin: unnarrowed, sharedIds }), admin }
    },

    /** Throws unauthorized (anonymous) or forbidden (naming the permission) for a refused scope. */
    refuse(principal: Principal, collection: Collection, action: string): never {
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
      throw new AppError('forbidden', `Missing permission collections/${collection.name}:${action}`, {
        resource: `collections/${collection.name}`,
        action,
      })
    },
  }
}

export type RecordAccess = ReturnType<typeof createRecordAccess>
