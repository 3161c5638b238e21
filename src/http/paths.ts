import { getPath } from 'hono/utils/url'

/**
 * Deprecated unversioned aliases: `/api/<x>` answers as `/api/v1/<x>`, except the paths that
 * have no version by design (auth, the OpenAPI document and its UI).
 */
export function isDeprecatedAlias(path: string): boolean {
  return (
    path.startsWith('/api/') &&
    !path.startsWith('/api/v1/') &&
    !path.startsWith('/api/auth/') &&
    !path.startsWith('/api/docs') &&
    path !== '/api/v1' &&
    path !== '/api/openapi.json'
  )
}

/** The path Hono routes on: the request's own, or the versioned successor of a deprecated alias. */
export function routedPath(request: Request): string {
  const path = getPath(request)
  return isDeprecatedAlias(path) ? `/api/v1${path.slice(4)}` : path
}

/** The path as the client sent it, without the query string. */
export function requestPath(request: Request): string {
  return getPath(request)
}
