import { AppError, isAppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { CompiledGrant } from './decide.js'
import type { Decider } from './decider.js'
import { handOutRefusal } from './hand-out.js'
import type { LoadedRole, RoleCache } from './role-cache.js'

/**
 * What a caller without admin access may hand out, assign or change: nothing beyond what it holds itself
 * (decisions 008 and 012). Administrators may do all of it.
 */
export function createReachChecks(deps: { roles: RoleCache; decider: Decider }) {
  const { decider } = deps

  /**
   * Throws forbidden unless a caller without admin access holds every one of these grants at least as
   * widely: the permission itself, a row scope no wider (none held → any; else the same filter, or one of
   * the filters held), and no column beyond those held. Administrators may hand out anything.
   */
  async function assertMayHandOut(actor: Principal, grants: readonly CompiledGrant[]): Promise<void> {
    // A capped caller hands out only what it and every ceiling could each hand out.
    for (let layer: Principal | null = actor; layer !== null; layer = layer.ceiling) {
      if (await decider.ownAdminAccess(layer)) continue
      for (const grant of grants) {
        const refusal = handOutRefusal(grant, await decider.decideUnresolved(layer, grant.resource, grant.action))
        if (refusal === null) continue
        const permission = `${grant.resource}:${grant.action}`
        const why =
          refusal === 'permission'
            ? 'which you do not hold'
            : `on more ${refusal === 'rows' ? 'rows' : 'fields'} than you may reach yourself`
        throw new AppError('forbidden', `You cannot grant ${permission}, ${why}`, {
          resource: grant.resource,
          action: grant.action,
        })
      }
    }
  }

  /**
   * Throws forbidden unless a caller without admin access could hand out everything the role holds (decision
   * 008): a role with admin access, or one holding a grant the caller does not hold as widely, is above the
   * caller, who may then neither assign it, act on its holders, nor change or delete it. `verb` says which.
   */
  async function assertWithinReach(actor: Principal, role: LoadedRole, verb: string): Promise<void> {
    if (await decider.hasAdminAccess(actor)) return
    if (role.adminAccess)
      throw new AppError('forbidden', `Only an administrator may ${verb} the role ${role.name}`, { role: role.name })
    try {
      await assertMayHandOut(actor, role.grants)
    } catch (err) {
      if (isAppError(err) && err.code === 'forbidden') {
        throw new AppError(
          'forbidden',
          `You may not ${verb} the role ${role.name}, which holds more than you do: ${err.message}`,
          { role: role.name, ...err.details },
        )
      }
      throw err
    }
  }

  return {
    assertMayHandOut,
    assertWithinReach,

    /**
     * Throws forbidden unless the caller may give someone this role (or act on someone who holds it): a
     * caller without admin access only a role without admin access whose every grant it holds at least as
     * widely. Throws not_found for an unknown role.
     */
    async assertMayAssign(actor: Principal, projectId: string, roleId: string): Promise<void> {
      if (await decider.hasAdminAccess(actor)) return
      await assertWithinReach(actor, await deps.roles.requireRole(projectId, roleId), 'act on')
    },
  }
}

export type ReachChecks = ReturnType<typeof createReachChecks>
