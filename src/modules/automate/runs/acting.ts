import type { TimeSource } from '../../../lib/clock.js'
import { AppError, isAppError } from '../../../lib/errors.js'
import { principals, type Principal } from '../../../lib/principal.js'
import { assertMaySetRunAs, type RunAsDeps } from '../flows/run-as.js'
import type { FlowForRun, RunAs, TriggerInput } from '../model.js'
import { publisherPrincipal, type PublisherSources } from '../publisher.js'
import { runIdentity } from '../run-identity.js'

/**
 * Who a run acts as, resolved once when it starts (run-identity.ts) and stored on the run row, so any
 * instance that runs it rebuilds the same principal. Never a credential.
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
  /** Whom the run never exceeds (its publisher, or a service key that set off a delegation); null: nobody. Absent on runs stored before decision 045. */
  readonly ceiling?: Acting | null
}

/** A run whose publisher can no longer stand behind it (gone, banned, demoted below the delegation): it fails as `delegation_revoked`. */
export class DelegationRevoked extends Error {
  override name = 'DelegationRevoked'
  readonly code = 'delegation_revoked'
}

export interface ActingDeps {
  readonly users: {
    findRow(id: string): Promise<{
      id: string
      project_id: string
      role_id: string
      email: string | null
      banned: boolean | number
    } | null>
  }
  readonly access: RunAsDeps['access']
  readonly apiKeys: Pick<PublisherSources, 'findApiKey'>
}

export type ActingResolver = ReturnType<typeof createActingResolver>

/**
 * The resolver runs use. `$user.email` of an initiator (already authenticated by their request) is kept a
 * few seconds, so a burst of executions by one person reads their row once; a changed address shows
 * within that time. Nothing else is cached: publishers, owners and roles are read at every start, so a
 * demotion or a ban applies to the next run.
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
    /** The identity of a run of `flow` (its published runAs); throws DelegationRevoked when its publisher no longer stands behind it. */
    resolve: (flow: FlowForRun, runAs: RunAs, trigger: TriggerInput, initiator: Principal | null) =>
      resolveActing({ ...deps, initiatorEmail }, flow, runAs, trigger, initiator),
  }
}

type Deps = ActingDeps & { initiatorEmail?: (userId: string) => Promise<string | null> }

/** runAs → the identity the run acts as (run-identity.ts says which; this builds it). Throws DelegationRevoked. */
export async function resolveActing(
  deps: Deps,
  flow: FlowForRun,
  runAs: RunAs,
  trigger: TriggerInput,
  initiator: Principal | null,
): Promise<Acting> {
  // Every trigger finds its flow in its initiator's project: a run never acts for a caller of another one.
  if (initiator && initiator.projectId !== flow.projectId)
    throw new AppError('forbidden', 'A run acts only in the project of whoever sets it off', {
      projectId: flow.projectId,
    })
  const identity = runIdentity(flow.system === true, runAs, trigger.type, initiator)
  if (identity.who === 'system') return systemActing(flow.projectId)
  const publisher = await publisherPrincipal(
    { findRow: deps.users.findRow, roleById: deps.access.roleById, findApiKey: deps.apiKeys.findApiKey },
    flow.projectId,
    flow.publishedBy ?? null,
  )
  if (!publisher)
    throw new DelegationRevoked(
      'The person or key that published this flow can no longer act (deleted, banned or revoked); publish it again to let it run',
    )
  const ceiling = await fromPrincipal(deps, publisher)
  switch (identity.who) {
    case 'initiator': {
      const starter = await fromPrincipal(deps, initiator!)
      // The publisher setting off their own flow needs no second copy of themselves as its ceiling.
      return sameIdentity(starter, ceiling) ? starter : { ...starter, ceiling: below(starter, ceiling) }
    }
    case 'anonymous':
      return { ...anonymous(flow.projectId), ceiling }
    case 'publisher':
      return ceiling
    default:
      break
  }
  await assertStillDelegable(deps, publisher, flow, runAs)
  if (identity.who === 'owner') {
    const owner = flow.createdBy ? await deps.users.findRow(flow.createdBy) : null
    const role = owner && !owner.banned ? await deps.access.roleById(owner.project_id, owner.role_id) : null
    if (!owner || !role)
      throw new DelegationRevoked('The flow owner this flow runs as can no longer act (deleted or banned)')
    return person(flow.projectId, owner, role)
  }
  const role = await deps.access.roleById(flow.projectId, identity.roleId)
  if (!role) throw new DelegationRevoked(`The role this flow runs as (${identity.roleId}) no longer exists`)
  if (identity.who === 'initiator_with_role') {
    const starter = initiator!
    const user = await deps.users.findRow(starter.userId!)
    if (!user || user.banned) throw new DelegationRevoked('The person who set this run off can no longer act')
    // A key keeps its capabilities: a run it sets off never reaches beyond them.
    if (starter.kind === 'api_key')
      return {
        ...person(flow.projectId, user, role),
        kind: 'api_key',
        apiKeyId: starter.apiKeyId,
        capabilities: starter.capabilities,
        roleName: 'api',
      }
    return person(flow.projectId, user, role)
  }
  const holder = publisher.userId ? await deps.users.findRow(publisher.userId) : null
  if (!holder)
    throw new DelegationRevoked('A role delegation needs a person to hold the role; the publisher is a service key')
  const held =
    publisher.kind === 'api_key'
      ? {
          ...person(flow.projectId, holder, role),
          kind: 'api_key' as const,
          apiKeyId: publisher.apiKeyId,
          capabilities: publisher.capabilities,
          roleName: 'api',
        }
      : person(flow.projectId, holder, role)
  // A service key that set the run off bounds it too.
  return initiator?.kind === 'api_key' ? { ...held, ceiling: await fromPrincipal(deps, initiator) } : held
}

/** True when both act with exactly the same rights (the same person or key, role and project, no ceilings). */
function sameIdentity(a: Acting, b: Acting): boolean {
  return (
    !a.ceiling &&
    !b.ceiling &&
    a.kind === b.kind &&
    a.userId === b.userId &&
    a.roleId === b.roleId &&
    a.apiKeyId === b.apiKeyId &&
    a.projectId === b.projectId &&
    a.homeProjectId === b.homeProjectId
  )
}

/** The ceiling chain of `acting` with `last` at its end (an initiator already capped keeps its own ceilings). */
function below(acting: Acting, last: Acting): Acting {
  return acting.ceiling ? { ...acting.ceiling, ceiling: below(acting.ceiling, last) } : last
}

/** Throws DelegationRevoked unless the publisher could still set this runAs (manage, and reach over the owner or role). */
async function assertStillDelegable(deps: Deps, publisher: Principal, flow: FlowForRun, runAs: RunAs): Promise<void> {
  try {
    await assertMaySetRunAs(
      { access: deps.access, findUser: deps.users.findRow, findApiKey: deps.apiKeys.findApiKey },
      publisher,
      flow.projectId,
      flow.createdBy,
      runAs,
    )
  } catch (err) {
    if (isAppError(err) && err.status < 500)
      throw new DelegationRevoked(`The publisher of this flow may no longer delegate it (${runAs}): ${err.message}`)
    throw err
  }
}

/** The principal a stored Acting stands for, with its ceilings. */
export function principalOf(acting: Acting): Principal {
  const own = ownPrincipalOf(acting)
  return acting.ceiling ? principals.capped(own, principalOf(acting.ceiling)) : own
}

function ownPrincipalOf(acting: Acting): Principal {
  const person = {
    homeProjectId: acting.homeProjectId,
    projectId: acting.projectId,
    userId: acting.userId ?? '',
    roleId: acting.roleId ?? '',
    roleName: acting.roleName,
    superAdmin: acting.superAdmin,
  }
  switch (acting.kind) {
    case 'user':
      return principals.capability(person)
    case 'api_key':
      if (acting.userId === null)
        return principals.serviceKey({
          id: acting.apiKeyId ?? '',
          projectId: acting.projectId,
          capabilities: acting.capabilities ?? [],
        })
      return principals.apiKey({ id: acting.apiKeyId ?? '', capabilities: acting.capabilities ?? [] }, person)
    case 'system':
      return principals.system(acting.projectId, 'automate.run')
    default:
      return principals.anonymous(acting.projectId)
  }
}

/** A principal as an Acting, its ceilings included. */
async function fromPrincipal(deps: Deps, p: Principal): Promise<Acting> {
  const email = p.userId
    ? await (deps.initiatorEmail ?? (async (id: string) => (await deps.users.findRow(id))?.email ?? null))(p.userId)
    : null
  return {
    kind: p.kind,
    projectId: p.projectId,
    homeProjectId: p.homeProjectId,
    userId: p.userId,
    roleId: p.roleId,
    roleName: p.roleName,
    superAdmin: p.superAdmin,
    apiKeyId: p.apiKeyId,
    capabilities: p.capabilities,
    email,
    ceiling: p.ceiling ? await fromPrincipal(deps, p.ceiling) : null,
  }
}

function person(
  projectId: string,
  user: { id: string; project_id: string; email: string | null },
  role: { id: string; name: string },
): Acting {
  return {
    kind: 'user',
    projectId,
    homeProjectId: user.project_id,
    userId: user.id,
    roleId: role.id,
    roleName: role.name,
    superAdmin: role.name === 'super_admin',
    apiKeyId: null,
    capabilities: null,
    email: user.email,
    ceiling: null,
  }
}

function systemActing(projectId: string): Acting {
  return {
    kind: 'system',
    projectId,
    homeProjectId: projectId,
    userId: null,
    roleId: null,
    roleName: 'system',
    superAdmin: false,
    apiKeyId: null,
    capabilities: null,
    email: null,
    ceiling: null,
  }
}

function anonymous(projectId: string): Acting {
  return {
    kind: 'anonymous',
    projectId,
    homeProjectId: projectId,
    userId: null,
    roleId: null,
    roleName: 'public',
    superAdmin: false,
    apiKeyId: null,
    capabilities: null,
    email: null,
    ceiling: null,
  }
}
