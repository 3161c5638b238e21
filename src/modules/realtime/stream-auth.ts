import { createHash } from 'node:crypto'
import type { Context } from 'hono'
import { AppError } from '../../lib/errors.js'
import type { AppEnv, Security } from '../../lib/http/index.js'
import type { Principal } from '../../lib/principal.js'
import { bearerToken } from '../auth/index.js'
import type { StreamCaller } from './service.js'

/** What the stream needs from capability tokens (the capability-tokens module provides it). */
export interface CapabilityPort {
  isToken(credential: string): boolean
  /** Signature, expiry, the subject's current account and rights; throws unauthorized, forbidden, record_not_found. */
  resolve(
    token: string,
  ): Promise<{ principal: Principal; claims: { collection: string; id: string; expiresAt: number } }>
}

/** A fixed-size key for a credential (the raw token is not kept a second time). */
function digest(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url')
}

/**
 * How a stream request is authenticated: a Bearer header, or `?token=` for browsers (EventSource and
 * WebSocket cannot set headers), holding a session token, an `sk-` key or an `sct1.` capability token. A
 * query token is treated exactly as the header would be, and is never logged (the access log leaves query
 * strings out). Sending both is refused, so no request carries two identities. `?project=` is the stream's
 * `X-Project-Id` (a super_admin acting in another project) for the same reason.
 */
export function createStreamAuth(authenticate: Security['authenticate'], capabilities: CapabilityPort) {
  const callers = new WeakMap<Principal, StreamCaller>()

  async function resolve(c: Context<AppEnv>): Promise<Principal> {
    const fromQuery = c.req.query('token')
    const header = bearerToken(c)
    if (fromQuery !== undefined && header !== null)
      throw new AppError('invalid_request', 'Send the token once: in the Authorization header or as ?token=')
    const credential = fromQuery ?? header
    if (fromQuery === '') throw new AppError('unauthorized', 'token is empty')

    if (credential !== null && capabilities.isToken(credential)) {
      const { principal, claims } = await capabilities.resolve(credential)
      // The subject as checked now; at each event its grants and shares are read again (open()).
      callers.set(principal, {
        principal,
        refresh: async () => principal,
        key: digest(['capability', credential]),
        document: { collection: claims.collection, id: claims.id },
        expiresAt: claims.expiresAt,
      })
      return principal
    }
    // `?project=` stands for X-Project-Id, which a browser's WebSocket cannot send either: the same check
    // follows (a super_admin's, else 403).
    const project = c.req.query('project')
    if (project !== undefined) {
      const incoming = c.env?.incoming
      if (!incoming) throw new AppError('invalid_request', 'Streams are served by the Node server only')
      if (incoming.headers['x-project-id'] !== undefined && incoming.headers['x-project-id'] !== project)
        throw new AppError('invalid_request', 'Name the project once: in X-Project-Id or as ?project=')
      incoming.headers['x-project-id'] = project
    }
    if (fromQuery !== undefined) {
      const incoming = c.env?.incoming
      if (!incoming) throw new AppError('invalid_request', 'Streams are served by the Node server only')
      // The routes' own authenticate reads the header: the query token becomes the header it stands for,
      // and stays so for the re-checks at each event.
      incoming.headers.authorization = `Bearer ${fromQuery}`
    }
    const principal = await authenticate(c)
    // Everything authenticate() reads from the request: two streams that agree on it resolve alike.
    const headers = c.env?.incoming?.headers
    const key = headers
      ? digest(
          ['authorization', 'cookie', 'x-project-id', 'origin', 'host', 'sec-fetch-site'].map(
            (h) => headers[h] ?? null,
          ),
        )
      : undefined
    callers.set(principal, { principal, refresh: () => authenticate(c), key, document: null, expiresAt: null })
    return principal
  }

  return {
    /** The security of the stream route: resolves the caller; the realtime service decides on access. */
    security: { authenticate: resolve, authorize: async () => {} } satisfies Security,

    /** The caller a principal of this route's guard belongs to. Throws internal for any other principal. */
    callerOf(principal: Principal): StreamCaller {
      const caller = callers.get(principal)
      if (!caller) throw new AppError('internal', 'A stream principal that the stream guard did not resolve')
      return caller
    },
  }
}

export type StreamAuth = ReturnType<typeof createStreamAuth>
