import { RegExpRouter } from 'hono/router/reg-exp-router'
import { SmartRouter } from 'hono/router/smart-router'
import { TrieRouter } from 'hono/router/trie-router'
import { isDeprecatedAlias } from '../paths.js'

/** The label of a request that matched no route: one value for every unknown path, so labels stay bounded. */
export const unmatchedRoute = 'unmatched'

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** A method as a label: the usual seven as they are, anything else `OTHER`. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && knownMethods.has(method) ? method : 'OTHER'
}

/**
 * Names requests by the template of the route that answers them (`/api/v1/collections/{name}/records`),
 * never by their raw path, so a metric has one series per route rather than one per record id. The
 * transport measures a request after the app answered and knows only its path, so the app's route table
 * is matched again here, with Hono's own routers, in the app's order (the most specific route first,
 * route-order.ts): the first route registered for the path and method is the one that answered. Global
 * middleware (`/*`: the body limit, CORS) names no route. A deprecated alias is named by its successor.
 */
export function createRouteLabels(routes: readonly { method: string; path: string }[]) {
  const router = new SmartRouter<string>({ routers: [new RegExpRouter(), new TrieRouter()] })
  const seen = new Set<string>()
  for (const { method, path } of routes) {
    if (path === '/*' || path === '*') continue
    const key = `${method} ${path}`
    if (seen.has(key)) continue
    seen.add(key)
    router.add(method, path, templateOf(path))
  }
  return (method: string | undefined, path: string): string => {
    const routed = isDeprecatedAlias(path) ? `/api/v1${path.slice(4)}` : path
    // Hono answers HEAD with the GET route.
    const [handlers] = router.match(method === 'HEAD' ? 'GET' : (method ?? 'GET'), routed)
    return handlers[0]?.[0] ?? unmatchedRoute
  }
}

/** Hono's `/:name` parameters in OpenAPI's spelling, `/{name}` (a parameter's own pattern dropped). */
export function templateOf(path: string): string {
  return path.replace(/\/:(\w+)(\{[^}]*\})?\??/g, '/{$1}')
}
