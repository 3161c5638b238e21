import { randomUUID } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from '../lib/http/index.js'
import type { Logger } from '../lib/log.js'
import { requestPath } from './paths.js'

const acceptableRequestId = /^[\w.:-]{1,128}$/

/**
 * The first middleware of every request: assigns the request id, stamps the version headers (and the
 * deprecation headers on an alias) on whatever response comes back, errors and 404s included, and
 * writes the one log line per request. The line never carries headers, bodies or the query string.
 */
export function requestContext(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now()
    const incoming = c.req.header('x-request-id')
    const requestId = incoming && acceptableRequestId.test(incoming) ? incoming : randomUUID()
    c.set('requestId', requestId)

    await next()

    const headers = c.res.headers
    headers.set('X-API-Version', 'v1')
    headers.set('X-Request-ID', requestId)
    const path = requestPath(c.req.raw)
    if (path !== c.req.path && !c.get('unmatched')) {
      headers.set('Deprecation', 'true')
      headers.set('Link', `<${c.req.path}>; rel="successor-version"`)
    }
    log.info(
      { reqId: requestId, method: c.req.method, path, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 },
      'request',
    )
  }
}
