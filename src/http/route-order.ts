import { OpenAPIHono } from '@hono/zod-openapi'
import type { AppEnv } from '../lib/http/index.js'

/**
 * One router holding every route of `routers`, ordered so that matching does not depend on the order
 * modules are listed in: Hono answers with the first handler registered for a path, so a route whose
 * path is more specific, segment by segment (a static segment before a parameter, a parameter before a
 * wildcard), is registered first. `/collections/:name/records/export` then wins over
 * `/collections/:name/records/:id` whichever module declares it. Routes of equal shape keep their order
 * (the sort is stable), so a route's own middleware stays ahead of its handler. The API description of
 * every router is carried over as well.
 */
export function inSpecificOrder(routers: readonly OpenAPIHono<AppEnv>[]): OpenAPIHono<AppEnv> {
  const merged = new OpenAPIHono<AppEnv>()
  for (const router of routers) merged.route('/', router)
  // `route()` copies `merged.routes` into the app that mounts `merged`, in this order.
  merged.routes.sort((a, b) => compareSpecificity(a.path, b.path))
  return merged
}

/** Negative when `a` must be registered before `b`: compared segment by segment, static < parameter < wildcard; on a tie the shorter path first. */
export function compareSpecificity(a: string, b: string): number {
  const x = shapeOf(a)
  const y = shapeOf(b)
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! - y[i]!
  }
  return x.length - y.length
}

const STATIC = 0
const PARAMETER = 1
const WILDCARD = 2

function shapeOf(path: string): number[] {
  return path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => (segment.includes('*') ? WILDCARD : segment.startsWith(':') ? PARAMETER : STATIC))
}
