import type { Context } from 'hono'
import type { Principal } from '../principal.js'
import type { AppEnv } from './env.js'

/**
 * What a route declaration's `permission` means:
 * - `null`: public; no credential is read at all.
 * - `'authenticated'`: any valid credential; anonymous callers get 401.
 * - `'resource:action'`, with `{param}` placeholders filled from the path (`collections/{name}:read`):
 *   checked through the access module; anonymous callers denied get 401, others 403.
 */
export type RoutePermission = string | null

export interface Security {
  /** Resolves the caller from the request (anonymous when there is no credential). Throws unauthorized. */
  authenticate(c: Context<AppEnv>): Promise<Principal>
  /** Throws unauthorized or forbidden unless the principal holds the permission. */
  authorize(principal: Principal, permission: string): Promise<void>
}

/**
 * What a declared route runs before validation: resolve the caller, check the permission. Null for a
 * public route (no credential is read at all). It is not the only check: the service the handler calls
 * checks the same permission again for callers that are not routes (docs/permissions.md, decision 022);
 * this one runs first so that a refused caller learns nothing from a 400.
 */
export function guard(security: Security, permission: RoutePermission): ((c: Context<AppEnv>) => Promise<void>) | null {
  if (permission === null) return null
  const fill = permissionFiller(permission)
  return async (c) => {
    const principal = await security.authenticate(c)
    c.set('principal', principal)
    if (permission === 'authenticated') {
      if (principal.kind === 'anonymous') await security.authorize(principal, 'authenticated')
    } else {
      await security.authorize(principal, fill(c))
    }
  }
}

/**
 * The permission of a route for one request (`collections/{name}:read` → `collections/articles:read`):
 * the template is split once, so a request only reads its path parameters.
 */
function permissionFiller(permission: string): (c: Context<AppEnv>) => string {
  const parts = permission.split(/\{(\w+)\}/)
  if (parts.length === 1) return () => permission
  return (c) => {
    let out = parts[0]!
    for (let i = 1; i < parts.length; i += 2) out += (c.req.param(parts[i]!) ?? `{${parts[i]}}`) + parts[i + 1]!
    return out
  }
}

/** The caller resolved by the route's guard; throws when a route forgot to declare a permission. */
export function principalOf(c: Context<AppEnv>): Principal {
  const principal = c.get('principal')
  if (!principal) throw new Error(`Route ${c.req.method} ${c.req.path} reads the principal but declares no permission`)
  return principal
}
