import { AppError, isAppError } from '../../../lib/errors.js'
import { isSuperAdmin, principals, type Principal } from '../../../lib/principal.js'
import type { AccessService } from '../../access/index.js'
import type { RunAs } from '../model.js'
import { publisherRef } from '../run-identity.js'

export interface RunAsDeps {
  access: Pick<AccessService, 'authorize' | 'assertMayAssign' | 'roleById' | 'listRoles' | 'hasAdminAccess'>
  /** The flow owner's account (role and project), or null once deleted. */
  findUser(id: string): Promise<{ project_id: string; role_id: string; banned?: boolean | number } | null>
  /** An API key by id (apikeys.byId): the publisher of a flow published through a key. */
  findApiKey(id: string): Promise<{ projectId: string; userId: string | null; creatorRoleId: string | null } | null>
}

const SUPER_ADMIN = 'super_admin'

/**
 * Who may set a flow's runAs (automation spec "runAs rules"): triggering_user anyone who may update the
 * flow; flow_owner and role:<id> only holders of system/automate:manage, and only when what they delegate
 * is within their own reach (the role, or the owner's role, is one they could assign: decision 008).
 * Throws forbidden, validation_error (an unknown role, an owner who no longer exists).
 */
export async function assertMaySetRunAs(
  deps: RunAsDeps,
  actor: Principal,
  projectId: string,
  createdBy: string | null,
  runAs: RunAs,
): Promise<void> {
  if (runAs === 'triggering_user') return
  await deps.access.authorize(actor, 'system/automate:manage')
  if (runAs === 'flow_owner') {
    const owner = createdBy === null ? null : await deps.findUser(createdBy)
    if (!owner)
      throw new AppError(
        'validation_error',
        'runAs: the flow has no owner any more; choose triggering_user or a role',
        { field: 'runAs' },
      )
    await assertWithin(
      deps,
      actor,
      owner.project_id,
      owner.role_id,
      'the flow owner, whose role holds more than you do',
    )
    return
  }
  const roleId = runAs.slice('role:'.length)
  const role = await deps.access.roleById(projectId, roleId)
  if (!role)
    throw new AppError('validation_error', `runAs: no role ${roleId} in this project`, { field: 'runAs', roleId })
  await assertWithin(deps, actor, projectId, roleId, `the role ${role.name}, which holds more than you do`)
}

/**
 * Throws forbidden unless the caller could let a flow's published version run as it does (decision 045), for
 * activation: a delegation (flow_owner, role:<id>) only by one who could set it; any other flow only by one
 * who reaches over its publisher, whose rights its runs act within (themselves; a person whose role the
 * caller could assign, super_admin only by a super_admin; an API key's creator; a service key only an
 * administrator). Throws conflict when the publisher can no longer act (publish it again instead).
 */
export async function assertMayRelease(
  deps: RunAsDeps,
  actor: Principal,
  projectId: string,
  flow: { createdBy: string | null; runAs: RunAs; publishedBy: string | null },
): Promise<void> {
  if (flow.runAs !== 'triggering_user') await assertMaySetRunAs(deps, actor, projectId, flow.createdBy, flow.runAs)
  const ref = flow.publishedBy
  if (ref === null || ref === publisherRef(actor)) return
  const gone = () =>
    new AppError(
      'conflict',
      'The person or key that published this flow can no longer act: publish it again to run it under your name',
      { publishedBy: ref },
    )
  if (ref.startsWith('key:')) {
    const key = await deps.findApiKey(ref.slice('key:'.length))
    if (!key) throw gone()
    if (key.userId === null || key.creatorRoleId === null) {
      if (!(await deps.access.hasAdminAccess(actor)))
        throw new AppError(
          'forbidden',
          'This flow was published by a service key: only an administrator may set it running',
          { field: 'status' },
        )
      return
    }
    if (key.userId === actor.userId && actor.kind === 'user') return
    return assertWithin(
      deps,
      actor,
      key.projectId,
      key.creatorRoleId,
      'the key that published this flow, whose creator holds more than you do',
      'status',
    )
  }
  const publisher = await deps.findUser(ref)
  if (!publisher || publisher.banned) throw gone()
  await assertWithin(
    deps,
    actor,
    publisher.project_id,
    publisher.role_id,
    'the person who published this flow, who holds more than you do',
    'status',
  )
}

async function assertWithin(
  deps: RunAsDeps,
  actor: Principal,
  projectId: string,
  roleId: string,
  what: string,
  field = 'runAs',
): Promise<void> {
  const role = await deps.access.roleById(projectId, roleId)
  const refused = () =>
    new AppError(
      'forbidden',
      field === 'runAs' ? `runAs: you may not delegate to ${what}` : `You may not set this flow running as ${what}`,
      { field },
    )
  if (role?.name === SUPER_ADMIN && !isSuperAdmin(actor)) throw refused()
  try {
    await deps.access.assertMayAssign(actor, projectId, roleId)
  } catch (err) {
    if (isAppError(err) && err.code === 'forbidden')
      throw new AppError('forbidden', refused().message, { field, ...err.details })
    throw err
  }
}

/**
 * The roles a caller may delegate a flow to (`role:<id>`): none without system/automate:manage; else each
 * role of the project it could assign (super_admin only for a super_admin). Throws unauthorized.
 */
export async function assignableRoles(
  deps: RunAsDeps,
  actor: Principal,
): Promise<{ id: string; name: string; description: string; runAs: string }[]> {
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
    if (role.name === SUPER_ADMIN && !isSuperAdmin(actor)) continue
    try {
      await deps.access.assertMayAssign(actor, actor.projectId, role.id)
      out.push({ id: role.id, name: role.name, description: role.description, runAs: `role:${role.id}` })
    } catch (err) {
      if (!(isAppError(err) && err.code === 'forbidden')) throw err
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name))
}
