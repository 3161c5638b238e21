/**
 * Who is calling, resolved once per request from its credential. Decisions about what the caller may do
 * are made by the access module from this value; nothing here grants anything by itself.
 */
export interface Principal {
  readonly kind: 'user' | 'api_key' | 'anonymous'
  /** The project the request acts in: the caller's own, or another one a super_admin chose with X-Project-Id. */
  readonly projectId: string
  /** The project the user, key or anonymous caller belongs to. */
  readonly homeProjectId: string
  /** The signed-in user, or the user who created the API key; null for anonymous callers and service keys. */
  readonly userId: string | null
  /** The role whose grants apply: the user's, the key creator's, or the project's `public` role. */
  readonly roleId: string | null
  /** `$CURRENT_ROLE`: the user's role name, `api` for keys, `public` for anonymous callers. */
  readonly roleName: string
  readonly superAdmin: boolean
  readonly sessionId: string | null
  /** When the session ends (Unix seconds); null for keys and anonymous callers. */
  readonly sessionExpiresAt: number | null
  readonly apiKeyId: string | null
  /** An API key's permission strings (`resource:action`); null for every other caller. */
  readonly capabilities: readonly string[] | null
}

/** True for a caller that is a person (a session, or a key bound to a user). */
export function isPerson(principal: Principal): boolean {
  return principal.userId !== null
}
