import type { Context } from 'hono'
import { AppError } from '../../lib/errors.js'
import type { AppEnv } from '../../lib/http/index.js'
import { principals, type Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { ApiKeysService } from '../apikeys/index.js'
import type { ProjectsService } from '../projects/index.js'
import type { CookieSessions } from './cookie-session.js'
import type { ActiveSession, Sessions } from './sessions.js'

export interface AuthenticateDeps {
  sessions: Sessions
  apiKeys: ApiKeysService
  access: AccessService
  projects: ProjectsService
  defaultProjectId: string
  /** The admin UI's cookie sessions: read when a request sends no Authorization header. */
  cookies?: CookieSessions
}

const projectIdPattern = /^[0-9a-f]{32}$/

/**
 * The session the request's principal came from (null for keys and anonymous callers): kept on the request's
 * context by authenticate, so a route reads it without resolving it again.
 */
export function sessionOf(c: Context<AppEnv>): ActiveSession | null {
  return (c.get('session') as ActiveSession | undefined) ?? null
}

/** The raw bearer token of a request, or null when it sends none. Throws unauthorized when malformed. */
export function bearerToken(c: Context<AppEnv>): string | null {
  const incoming = c.env?.incoming
  const header = incoming ? incoming.headers.authorization : c.req.header('authorization')
  if (header === undefined || header === '') return null
  const match = /^Bearer +(\S+)$/i.exec(header)
  if (!match) throw new AppError('unauthorized', 'Authorization must be "Bearer <token>"')
  return match[1]!
}

/**
 * Resolves the caller: a session token, an `sk-` API key, or nobody (the project's `public` role).
 * `X-Project-Id` lets a super_admin act in another project; anonymous callers may name the project whose
 * public data they read. Throws unauthorized (bad credential), forbidden (X-Project-Id not allowed),
 * not_found (no such project).
 */
export function createAuthenticate(deps: AuthenticateDeps): (c: Context<AppEnv>) => Promise<Principal> {
  // Synchronous unless another project is named (almost every request names none: no await on the hot path).
  function targetProject(
    c: Context<AppEnv>,
    home: string,
    superAdmin: boolean,
    anonymous: boolean,
  ): string | Promise<string> {
    const incoming = c.env?.incoming
    const raw = incoming ? incoming.headers['x-project-id'] : c.req.header('x-project-id')
    const requested = Array.isArray(raw) ? raw[0] : raw
    if (!requested || requested === home) return home
    if (!superAdmin && !anonymous)
      throw new AppError('forbidden', 'Only a super_admin may act in another project (X-Project-Id)')
    if (!projectIdPattern.test(requested)) throw new AppError('not_found', 'Project not found')
    return deps.projects.get(requested).then(() => requested)
  }

  return async function authenticate(c: Context<AppEnv>): Promise<Principal> {
    const token = bearerToken(c)
    if (token === null) {
      // A cookie carries a session only (never an API key), and only for the site that set it (decision 078).
      const cookie = deps.cookies?.token(c) ?? null
      if (cookie !== null && !cookie.startsWith('sk-')) return fromSession(c, cookie)
      if (cookie !== null) throw new AppError('unauthorized', 'Invalid or expired session')
      return principals.anonymous(await targetProject(c, deps.defaultProjectId, false, true))
    }

    if (token.startsWith('sk-')) {
      const key = await deps.apiKeys.resolve(token)
      if (!key) throw new AppError('unauthorized', 'Invalid, revoked or expired API key')
      if (key.userId === null || key.creatorRoleId === null) {
        // A service key acts in its own project only (X-Project-Id is a super_admin's).
        await targetProject(c, key.projectId, false, false)
        return principals.serviceKey({ id: key.id, projectId: key.projectId, capabilities: key.capabilities })
      }
      const superAdmin = (await deps.access.roleById(key.projectId, key.creatorRoleId))?.name === 'super_admin'
      const projectId = await targetProject(c, key.projectId, superAdmin, false)
      return principals.apiKey(key, {
        homeProjectId: key.projectId,
        projectId,
        userId: key.userId,
        roleId: key.creatorRoleId,
        roleName: 'api',
        superAdmin,
      })
    }

    return fromSession(c, token)
  }

  async function fromSession(c: Context<AppEnv>, token: string): Promise<Principal> {
    const session = await deps.sessions.resolve(token)
    if (!session) throw new AppError('unauthorized', 'Invalid or expired session')
    const role = await deps.access.roleById(session.projectId, session.roleId)
    const superAdmin = role?.name === 'super_admin'
    const target = targetProject(c, session.projectId, superAdmin, false)
    const projectId = typeof target === 'string' ? target : await target
    const principal = principals.user(
      {
        homeProjectId: session.projectId,
        projectId,
        userId: session.userId,
        roleId: session.roleId,
        roleName: role?.name ?? 'unknown',
        superAdmin,
      },
      { id: session.id, expiresAt: session.expiresAt },
    )
    c.set('session', session)
    return principal
  }
}
