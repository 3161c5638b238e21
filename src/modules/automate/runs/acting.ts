import type { TimeSource } from '../../../lib/clock.js'
import { principals, type Principal } from '../../../lib/principal.js'
import type { FlowForRun, RunAs, TriggerInput } from '../model.js'

/**
 * Who a run acts as, resolved once when it starts (automation spec "runAs rules") and stored on the run
 * row, so any instance that runs it rebuilds the same principal. Never a credential.
 */
export interface Acting {
  readonly kind: Principal['kind']
  readonly projectId: string
  readonly homeProjectId: string
  readonly userId: string | null
  readonly roleId: string | null
  readonly roleName: string
  readonly superAdmin: boolean
  readonly apiKeyId: string | null
  /** An API key's permission strings (not a secret). */
  readonly capabilities: readonly string[] | null
  /** `$user.email`, read when the run started. */
  readonly email: string | null
}

export interface ActingDeps {
  readonly users: { findRow(id: string): Promise<{ id: string; project_id: string; role_id: string; email: string | null; banned: boolean | number } | null> }
  readonly access: { roleById(projectId: string, id: string): Promise<{ id: string; name: string } | null> }
}

export type ActingResolver = ReturnType<typeof createActingResolver>

/**
 * The resolver runs use. `$user.email` of an initiator (already authenticated by their request) is kept a
 * few seconds, so a burst of executions by one person reads their row once; a changed address shows
 * within that time. Nothing else is cached: owners and roles are read at every start.
 */
export function createActingResolver(deps: ActingDeps, clock: TimeSource) {
  const emails = new Map<string, { email: string | null; until: number }>()
  const emailTtlMs = 5000
  async function initiatorEmail(userId: string): Promise<string | null> {
    const now = clock.now()
    const hit = emails.get(userId)
    if (hit && hit.until > now) return hit.email
    const email = (await deps.users.findRow(userId))?.email ?? null
    if (emails.size >= 1000) emails.clear()
    emails.set(userId, { email, until: now + emailTtlMs })
    return email
  }
  return {
    resolve: (flow: FlowForRun, runAs: RunAs, trigger: TriggerInput, initiator: Principal | null) => resolveActing({ ...deps, initiatorEmail }, flow, runAs, trigger, initiator),
  }
}

/**
 * runAs → the identity the run acts as:
 * - triggering_user: the initiator as they are; with none, a schedule acts as the flow owner and anything
 *   else (a webhook) as the project's anonymous caller (the `public` role: least privilege); a write made
 *   by Plinth itself (the `system` principal) acts as the flow owner;
 * - flow_owner: the flow's creator with their current role;
 * - role:<id>: the initiator (else the owner) holding that role's grants instead of their own.
 * An identity that no longer exists (a deleted or banned owner, a deleted role) falls back to anonymous.
 */
export async function resolveActing(deps: ActingDeps & { initiatorEmail?: (userId: string) => Promise<string | null> }, flow: FlowForRun, runAs: RunAs, trigger: TriggerInput, initiator: Principal | null): Promise<Acting> {
  const projectId = flow.projectId
  // A system-managed flow runs Plinth's own maintenance: it acts as the system, never as whoever set it off.
  if (flow.system) return systemActing(projectId)
  if (runAs === 'triggering_user') {
    // Work Plinth starts itself (a repair, a sweep) may do anything in the project: a flow it sets off acts
    // as the flow's owner instead, as a schedule does, so a flow author never borrows more than the owner holds.
    if (initiator && initiator.kind !== 'system') return fromPrincipal(deps, initiator)
    if (trigger.type === 'schedule' || initiator) return ownerActing(deps, flow, null)
    return anonymous(projectId)
  }
  if (runAs === 'flow_owner') return ownerActing(deps, flow, null)
  const roleId = runAs.slice('role:'.length)
  const role = await deps.access.roleById(projectId, roleId)
  if (!role) return anonymous(projectId)
  if (initiator?.userId) {
    const user = await deps.users.findRow(initiator.userId)
    if (!user || user.banned) return anonymous(projectId)
    return person(projectId, user, role)
  }
  return ownerActing(deps, flow, role)
}

/** The principal a stored Acting stands for. */
export function principalOf(acting: Acting): Principal {
  const person = { homeProjectId: acting.homeProjectId, projectId: acting.projectId, userId: acting.userId ?? '', roleId: acting.roleId ?? '', roleName: acting.roleName, superAdmin: acting.superAdmin }
  switch (acting.kind) {
    case 'user':
      return principals.capability(person)
    case 'api_key':
      if (acting.userId === null) return principals.serviceKey({ id: acting.apiKeyId ?? '', projectId: acting.projectId, capabilities: acting.capabilities ?? [] })
      return principals.apiKey({ id: acting.apiKeyId ?? '', capabilities: acting.capabilities ?? [] }, person)
    case 'system':
      return principals.system(acting.projectId, 'automate.run')
    default:
      return principals.anonymous(acting.projectId)
  }
}

async function fromPrincipal(deps: ActingDeps & { initiatorEmail?: (userId: string) => Promise<string | null> }, p: Principal): Promise<Acting> {
  const email = p.userId ? await (deps.initiatorEmail ?? (async (id: string) => (await deps.users.findRow(id))?.email ?? null))(p.userId) : null
  return {
    kind: p.kind, projectId: p.projectId, homeProjectId: p.homeProjectId, userId: p.userId, roleId: p.roleId, roleName: p.roleName, superAdmin: p.superAdmin,
    apiKeyId: p.apiKeyId, capabilities: p.capabilities, email,
  }
}

async function ownerActing(deps: ActingDeps, flow: FlowForRun, role: { id: string; name: string } | null): Promise<Acting> {
  const owner = flow.createdBy ? await deps.users.findRow(flow.createdBy) : null
  if (!owner || owner.banned) return anonymous(flow.projectId)
  const ownRole = role ?? (await deps.access.roleById(owner.project_id, owner.role_id))
  if (!ownRole) return anonymous(flow.projectId)
  return person(flow.projectId, owner, ownRole)
}

function person(projectId: string, user: { id: string; project_id: string; email: string | null }, role: { id: string; name: string }): Acting {
  return {
    kind: 'user', projectId, homeProjectId: user.project_id, userId: user.id, roleId: role.id, roleName: role.name, superAdmin: role.name === 'super_admin',
    apiKeyId: null, capabilities: null, email: user.email,
  }
}

function systemActing(projectId: string): Acting {
  return { kind: 'system', projectId, homeProjectId: projectId, userId: null, roleId: null, roleName: 'system', superAdmin: false, apiKeyId: null, capabilities: null, email: null }
}

function anonymous(projectId: string): Acting {
  return { kind: 'anonymous', projectId, homeProjectId: projectId, userId: null, roleId: null, roleName: 'public', superAdmin: false, apiKeyId: null, capabilities: null, email: null }
}
