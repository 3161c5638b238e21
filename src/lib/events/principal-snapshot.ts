import type { Principal } from '../principal.js'

/**
 * Who acted, as events carry it (docs/events.md): plain data, safe to publish, store and hand to flows.
 * `id` names who acted: the user for a session, the key for an API key or a service key (a key's person,
 * if any, is the record's created_by/updated_by), null for an anonymous caller.
 */
export interface PrincipalSnapshot {
  readonly id: string | null
  readonly kind: Principal['kind']
  /** The role whose grants applied (`$CURRENT_ROLE`): the user's role name, `api` for keys, `public` for anonymous callers. */
  readonly role: string
}

/** The event-safe snapshot of a principal: no session, capabilities or project switch. */
export function principalSnapshot(principal: Principal): PrincipalSnapshot {
  return {
    id: principal.kind === 'api_key' ? principal.apiKeyId : principal.userId,
    kind: principal.kind,
    role: principal.roleName,
  }
}
