import { principals, type Principal } from '../../../lib/principal.js'

/** What rebuilding a person needs: the account (users.findRow) and its role (access.roleById). */
export interface PersonSources {
  findRow(userId: string): Promise<{ project_id: string; role_id: string; banned: boolean | number } | null>
  roleById(projectId: string, roleId: string): Promise<{ name: string } | null>
}

/**
 * `TriggerDeps.personOf`: the person of an event snapshot as they are now, as a capability-style principal
 * (their current role, no session). Null when the account is gone, banned, or belongs to another project.
 */
export function createPersonOf(
  sources: PersonSources,
): (projectId: string, userId: string) => Promise<Principal | null> {
  return async (projectId, userId) => {
    const user = await sources.findRow(userId)
    if (!user || user.banned || user.project_id !== projectId) return null
    const role = await sources.roleById(user.project_id, user.role_id)
    if (!role) return null
    return principals.capability({
      homeProjectId: user.project_id,
      userId,
      roleId: user.role_id,
      roleName: role.name,
      superAdmin: role.name === 'super_admin',
    })
  }
}
