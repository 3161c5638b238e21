import { AppError, isAppError } from '../../../lib/errors.js'
import { principals, type Principal } from '../../../lib/principal.js'
import type { AccessService } from '../../access/index.js'
import type { RunAs } from '../model.js'

export interface RunAsDeps {
  access: Pick<AccessService, 'authorize' | 'assertMayAssign' | 'roleById' | 'listRoles'>
  /** The flow owner's account (role and project), or null once deleted. */
  findUser(id: string): Promise<{ project_id: string; role_id: string } | null>
}

const SUPER_ADMIN = 'super_admin'

/**
 * Who may set a flow's runAs (automation spec "runAs rules"): triggering_user anyone who may update the
 * flow; flow_owner and role:<id> only holders of system/automate:manage, and only when what they delegate
 * is within their own reach (the role, or the owner's role, is one they could assign: decision 008).
 * Throws forbidden, validation_error (an unknown role, an owner who no longer exists).
 */
export async function assertMaySetRunAs(deps: RunAsDeps, actor: Principal, projectId: string, createdBy: string | null, runAs: RunAs): Promise<void> {
  if (runAs === 'triggering_user') return
  await deps.access.authorize(actor, 'system/automate:manage')
  if (runAs === 'flow_owner') {
    const owner = createdBy === null ? null : await deps.findUser(createdBy)
    if (!owner) throw new AppError('validation_error', 'runAs: the flow has no owner any more; choose triggering_user or a role', { field: 'runAs' })
    await assertWithin(deps, actor, owner.project_id, owner.role_id, 'the flow owner, whose role holds more than you do')
    return
  }
  const roleId = runAs.slice('role:'.length)
  const role = await deps.access.roleById(projectId, roleId)
  if (!role) throw new AppError('validation_error', `runAs: no role ${roleId} in this project`, { field: 'runAs', roleId })
  await assertWithin(deps, actor, projectId, roleId, `the role ${role.name}, which holds more than you do`)
}

async function assertWithin(deps: RunAsDeps, actor: Principal, projectId: string, roleId: string, what: string): Promise<void> {
  const role = await deps.access.roleById(projectId, roleId)
  if (role?.name === SUPER_ADMIN && !actor.superAdmin) throw new AppError('forbidden', `runAs: you may not delegate to ${what}`, { field: 'runAs' })
  try {
    await deps.access.assertMayAssign(actor, projectId, roleId)
  } catch (err) {
    if (isAppError(err) && err.code === 'forbidden') throw new AppError('forbidden', `runAs: you may not delegate to ${what}`, { field: 'runAs', ...err.details })
    throw err
  }
}

/**
 * The roles a caller may delegate a flow to (`role:<id>`): none without system/automate:manage; else each
 * role of the project it could assign (super_admin only for a super_admin). Throws unauthorized.
 */
export async function assignableRoles(deps: RunAsDeps, actor: Principal): Promise<{ id: string; name: string; description: string; runAs: string }[]> {
  await deps.access.authorize(actor, 'authenticated')
  try {
    await deps.access.authorize(actor, 'system/automate:manage')
  } catch (err) {
    if (isAppError(err) && err.code === 'forbidden') return []
    throw err
  }
  // Listing needs system/roles:read, which the caller may lack; it learns only the roles within its reach.
  const roles = await deps.access.listRoles(principals.system(actor.projectId, 'automate.assignable-roles'))
  const out: { id: string; name: string; description: string; runAs: string }[] = []
  for (const role of roles) {
    if (role.name === SUPER_ADMIN && !actor.superAdmin) continue
    try {
      await deps.access.assertMayAssign(actor, actor.projectId, role.id)
      out.push({ id: role.id, name: role.name, description: role.description, runAs: `role:${role.id}` })
    } catch (err) {
      if (!(isAppError(err) && err.code === 'forbidden')) throw err
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name))
}
