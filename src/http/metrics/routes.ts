import { createHash, timingSafeEqual } from 'node:crypto'
import { AppError } from '../../lib/errors.js'
import { createRouter, defineRoute, z } from '../../lib/http/index.js'
import { contentType } from './exposition.js'
import type { Metrics } from './metrics.js'

/**
 * GET /metrics: an operator's endpoint for Prometheus, not part of the API, so it is left out of the
 * OpenAPI document (docs/running.md describes it). Mounted only when METRICS_TOKEN is set; otherwise the
 * path is unknown (404).
 */
export const metricsRoute = defineRoute({
  method: 'get',
  path: '/metrics',
  operationId: 'system.metrics',
  summary: 'Prometheus metrics of this instance (METRICS_TOKEN as a bearer token)',
  tags: ['System'],
  permission: null,
  hide: true,
  responses: {
    200: { description: 'Text exposition format 0.0.4', content: { 'text/plain': { schema: z.string() } } },
  },
})

/** The /metrics router: `Authorization: Bearer <token>` or 401 unauthorized. */
export function metricsRoutes(metrics: Metrics, token: string) {
  const expected = digest(token)
  const router = createRouter()
  router.openapi(metricsRoute, async (c) => {
    if (!bearerMatches(c.req.header('authorization'), expected)) {
      throw new AppError(
        'unauthorized',
        'GET /metrics needs the metrics token (METRICS_TOKEN) as a bearer token',
        {},
        { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } },
      )
    }
    return c.text(await metrics.render(), 200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' })
  })
  return router
}

/** Compares digests, not the tokens: equal lengths whatever was sent, so the time taken tells nothing. */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  return match !== null && timingSafeEqual(digest(match[1]!), expected)
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}
