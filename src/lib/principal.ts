import { AppError } from './errors.js'

/**
 * Who is acting, resolved once per request from its credential, or named by the code that acts (a sweep,
 * a repair, seeding). Decisions about what the caller may do are made by the access module from this
 * value; nothing here grants anything by itself. Build one only through `principals` below.
 *
 * Kinds: `user` (a session, or a capability token acting for its subject), `api_key` (an `sk-` key bound
 * to its creator, or a service key bound to nobody), `anonymous` (no credential: the project's `public`
 * role) and `system` (maintenance work started by Plinth itself; no credential maps to it, and it never
 * counts as a person).
 */
export interface Principal {
  readonly kind: 'user' | 'api_key' | 'anonymous' | 'system'
  /** The project the caller acts in: the caller's own, or another one a super_admin chose with X-Project-Id. */
  readonly projectId: string
  /** The project the user, key, anonymous caller or maintenance job belongs to. */
  readonly homeProjectId: string
  /** The signed-in user, or the user who created the API key; null for anonymous callers, service keys and system work. */
  readonly userId: string | null
  /** The role whose grants apply: the user's, the key creator's; null for anonymous (`public` applies), service keys and system work. */
  readonly roleId: string | null
  /** `$CURRENT_ROLE`: the user's role name, `api` for keys, `public` for anonymous callers, `system` for maintenance. */
  readonly roleName: string
  readonly superAdmin: boolean
  readonly sessionId: string | null
  /** When the session ends (Unix seconds); null for every other caller. */
  readonly sessionExpiresAt: number | null
  readonly apiKeyId: string | null
  /** An API key's permission strings (`resource:action`); null for every other caller. */
  readonly capabilities: readonly string[] | null
  /** Why a system principal acts (`files.cleanup`, `structure.repair`); null for every other caller. */
  readonly reason: string | null
  /**
   * The rights this principal may not exceed (a flow run's publisher, decision 045): every access decision
   * is the intersection of this principal's own and its ceiling's (itself possibly capped); null: none.
   * Read whether a principal is a super_admin with `isSuperAdmin`, which keeps to it.
   */
  readonly ceiling: Principal | null
  /** The flow run this principal acts in, so what the run writes carries it to the runs its events start; null outside runs. */
  readonly run: RunCause | null
}

/** Where a flow run stands in a chain of runs (events a run causes start runs one deeper). */
export interface RunCause {
  readonly runId: string
  readonly flowId: string
  /** 0 for a run started by a person, a schedule or a webhook; one more for each run that caused it. */
  readonly depth: number
}

/** The person a principal acts for, and the role that person holds. */
export interface PersonRole {
  /** The project the person belongs to. */
  readonly homeProjectId: string
  /** The project acted in (another one only for a super_admin); defaults to the home project. */
  readonly projectId?: string
  readonly userId: string
  readonly roleId: string
  readonly roleName: string
  readonly superAdmin: boolean
}

/**
 * Every principal is this one literal, keys in one order, so all of them share one object shape: the
 * request path reads a principal's fields many times, and mixed shapes (spreads, optional keys) cost
 * measurably there (bench records).
 */
function make(
  kind: Principal['kind'],
  projectId: string,
  homeProjectId: string,
  userId: string | null,
  roleId: string | null,
  roleName: string,
  superAdmin: boolean,
  session: { id: string; expiresAt: number } | null,
  key: { id: string; capabilities: readonly string[] } | null,
  reason: string | null,
  ceiling: Principal | null = null,
  run: RunCause | null = null,
): Principal {
  return Object.freeze({
    kind,
    projectId,
    homeProjectId,
    userId,
    roleId,
    roleName,
    superAdmin,
    sessionId: session ? session.id : null,
    sessionExpiresAt: session ? session.expiresAt : null,
    apiKeyId: key ? key.id : null,
    capabilities: key ? Object.freeze([...key.capabilities]) : null,
    reason,
    ceiling,
    run,
  })
}

/** The same principal with other ceiling and run (capped, uncapped, in a run). */
function remake(p: Principal, ceiling: Principal | null, run: RunCause | null): Principal {
  const session = p.sessionId === null ? null : { id: p.sessionId, expiresAt: p.sessionExpiresAt ?? 0 }
  const key = p.apiKeyId === null ? null : { id: p.apiKeyId, capabilities: p.capabilities ?? [] }
  return make(
    p.kind,
    p.projectId,
    p.homeProjectId,
    p.userId,
    p.roleId,
    p.roleName,
    p.superAdmin,
    session,
    key,
    p.reason,
    ceiling,
    run,
  )
}

/** The one place a Principal is built: every kind of caller, frozen. */
export const principals = {
  /** A signed-in person, from a session. */
  user(person: PersonRole, session: { id: string; expiresAt: number }): Principal {
    return make(
      'user',
      person.projectId ?? person.homeProjectId,
      person.homeProjectId,
      person.userId,
      person.roleId,
      person.roleName,
      person.superAdmin,
      session,
      null,
      null,
    )
  },

  /** The subject of a capability token: the person as they are now, without a session. */
  capability(person: PersonRole): Principal {
    return make(
      'user',
      person.projectId ?? person.homeProjectId,
      person.homeProjectId,
      person.userId,
      person.roleId,
      person.roleName,
      person.superAdmin,
      null,
      null,
      null,
    )
  },

  /** An `sk-` key bound to its creator: the creator's role, bounded by the key's capabilities. */
  apiKey(key: { id: string; capabilities: readonly string[] }, creator: PersonRole): Principal {
    return make(
      'api_key',
      creator.projectId ?? creator.homeProjectId,
      creator.homeProjectId,
      creator.userId,
      creator.roleId,
      'api',
      creator.superAdmin,
      null,
      key,
      null,
    )
  },

  /** A service key: bound to no user, it holds exactly its capabilities in its project. */
  serviceKey(key: { id: string; projectId: string; capabilities: readonly string[] }): Principal {
    return make('api_key', key.projectId, key.projectId, null, null, 'api', false, null, key, null)
  },

  /** A caller without a credential: the `public` role of the project it reads. */
  anonymous(projectId: string): Principal {
    return make('anonymous', projectId, projectId, null, null, 'public', false, null, null, null)
  },

  /**
   * Maintenance work Plinth starts itself (sweeps, repairs, seeding) in one project: allowed everything
   * there but `instance/…` resources (see the access decision), never a person. No credential maps to it.
   */
  system(projectId: string, reason = 'maintenance'): Principal {
    return make('system', projectId, projectId, null, null, 'system', false, null, null, reason)
  },

  /**
   * `principal` never reaching beyond `ceiling` (a flow run never exceeding its publisher): the ceiling goes
   * below any the principal already has, so every one of them still applies. System work is never capped by
   * what it caps (a ceiling of system adds nothing).
   */
  capped(principal: Principal, ceiling: Principal): Principal {
    if (ceiling.kind === 'system') return principal
    return remake(principal, principal.ceiling ? principals.capped(principal.ceiling, ceiling) : ceiling, principal.run)
  },

  /** The principal's own rights alone (the access decision intersects them with its ceiling's). */
  uncapped(principal: Principal): Principal {
    return principal.ceiling === null ? principal : remake(principal, null, principal.run)
  },

  /** The principal acting inside a flow run: what it writes starts runs one deeper (event chains, decision 045). */
  inRun(principal: Principal, run: RunCause): Principal {
    return remake(principal, principal.ceiling, run)
  },
}

/** True for a super_admin whose every ceiling is a super_admin too: the one way to read `superAdmin` outside the access decision. */
export function isSuperAdmin(principal: Principal): boolean {
  return principal.superAdmin && (principal.ceiling === null || isSuperAdmin(principal.ceiling))
}

/** True for a caller that is a person (a session, a capability token, or a key bound to a user); never system work. */
export function isPerson(principal: Principal): principal is Principal & { readonly userId: string } {
  return principal.kind !== 'system' && principal.kind !== 'anonymous' && principal.userId !== null
}

/**
 * The person acting, for what only a person can do (their own profile, second factor or password, their
 * API keys and capability tokens, "mine" and "by me"). Throws unauthorized for an anonymous caller and
 * forbidden for a service key or system work, which act for nobody.
 */
export function requirePerson(principal: Principal, what = 'This'): string {
  if (isPerson(principal)) return principal.userId
  if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
  throw new AppError(
    'forbidden',
    `${what} needs a signed-in person; ${principal.kind === 'system' ? 'system work' : 'a service key'} acts for nobody`,
    { kind: principal.kind },
  )
}
