import { randomUUID } from 'node:crypto'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { tagRequestId, type AppBindings } from '../lib/http/index.js'
import type { Logger } from '../lib/log.js'
import { isDeprecatedAlias } from './paths.js'
import { securityHeaders } from './security-headers.js'

export type Fetch = (request: Request, env: AppBindings) => Response | Promise<Response>

const acceptableRequestId = /^[\w.:-]{1,128}$/

/**
 * The Node request listener: the transport conventions of every response, applied before Hono sees
 * the request, so routes keep Hono's single-handler fast path (no global middleware on GET):
 * - `X-Request-ID` (the client's, when it is a sane token, else a new UUID) and `X-API-Version: v1`,
 *   on every response, errors and 404s included;
 * - the security headers (security-headers.ts), which a route may override with its own values;
 * - `Deprecation` and `Link` on the unversioned `/api/…` aliases (removed again by the 404 handler);
 * - one access-log line per request: id, method, path (never the query string), status, duration.
 */
export function nodeListener(fetch: Fetch, access: Logger): RequestListener {
  const handle = getRequestListener(fetch as (request: Request, env: unknown) => Response | Promise<Response>)
  return (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const started = performance.now()
    const sent = incoming.headers['x-request-id']
    const requestId = typeof sent === 'string' && acceptableRequestId.test(sent) ? sent : randomUUID()
    tagRequestId(incoming, requestId)
    outgoing.setHeader('X-API-Version', 'v1')
    outgoing.setHeader('X-Request-ID', requestId)
    for (const [name, value] of securityHeaders) outgoing.setHeader(name, value)

    const url = incoming.url ?? '/'
    const query = url.indexOf('?')
    const path = query === -1 ? url : url.slice(0, query)
    if (isDeprecatedAlias(path)) {
      outgoing.setHeader('Deprecation', 'true')
      outgoing.setHeader('Link', `</api/v1${path.slice(4)}>; rel="successor-version"`)
    }

    outgoing.once('close', () => {
      access.info(
        {
          reqId: requestId,
          method: incoming.method,
          path,
          status: outgoing.writableFinished ? outgoing.statusCode : 0,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      )
    })
    void handle(incoming, outgoing)
  }
}
