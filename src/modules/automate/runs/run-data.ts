import { isAppError } from '../../../lib/errors.js'
import { isSuperAdmin, type Principal } from '../../../lib/principal.js'
import type { AccessService } from '../../access/index.js'
import type { Acting } from './acting.js'

export type RunDataAccess = Pick<AccessService, 'assertMayAssign' | 'hasAdminAccess' | 'roleByName'>

/**
 * Whether `caller` may see what a run read and wrote (decision 045): only one who could have read it all
 * themselves, i.e. who reaches over the identity the run acted as: the same person in the same role; a
 * caller who could assign that role (every grant at least as wide; admin roles only administrators,
 * super_admin only a super_admin); for the anonymous caller, one who could assign `public`; for system work
 * and service keys, an administrator. A capped run reached no further than its ceiling, so reaching over
 * the ceiling is enough. system/automate:read alone shows the run's status, timing and errors, not its data.
 */
export async function mayReadRunData(access: RunDataAccess, caller: Principal, acting: Acting): Promise<boolean> {
  // System work (Plinth itself) administers its own project.
  if (caller.kind === 'system') return caller.projectId === caller.homeProjectId
  if (acting.ceiling && (await mayReadRunData(access, caller, acting.ceiling))) return true
  if (acting.kind === 'system' || (acting.kind === 'api_key' && acting.userId === null))
    return access.hasAdminAccess(caller)
  if (acting.superAdmin) return isSuperAdmin(caller)
  if (
    acting.kind !== 'anonymous' &&
    caller.kind === 'user' &&
    caller.userId === acting.userId &&
    caller.roleId === acting.roleId &&
    caller.ceiling === null
  )
    return true
  const roleId = acting.kind === 'anonymous' ? (await access.roleByName(acting.projectId, 'public'))?.id : acting.roleId
  if (!roleId) return access.hasAdminAccess(caller)
  try {
    await access.assertMayAssign(caller, acting.kind === 'anonymous' ? acting.projectId : acting.homeProjectId, roleId)
    return true
  } catch (err) {
    if (isAppError(err) && (err.code === 'forbidden' || err.code === 'not_found')) return false
    throw err
  }
}

/** Step logs without what the steps read and wrote: status, timing, attempts and errors stay. */
export function redactedSteps<T extends { input: unknown; output: unknown; logs: unknown[] }>(logs: readonly T[]): T[] {
  return logs.map((log) => ({ ...log, input: null, output: null, logs: [] }))
}
