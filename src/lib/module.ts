import type { OpenAPIHono } from '@hono/zod-openapi'
import type { AppEnv, Security } from './http/index.js'

/** The two guards module routes are mounted with; both exist only once every module is built. */
export interface RouteGuards {
  /** Resolves the caller and checks the permission a route declares. */
  readonly security: Security
  /**
   * For routes whose service decides who may do what (collections, records, shares, field options): the
   * caller is resolved, and an anonymous caller nothing could be open to is 401 at once, before its input
   * is validated (decision 012).
   */
  readonly readSecurity: Security
}

/**
 * What every module factory (`modules/<name>/module.ts`) returns besides its services: its routers,
 * given the guards, and `close` for what it started (caches, sweeps, subscriptions). `createApp` mounts the
 * routers (`app/http.ts`) in any order (route matching does not depend on it) and closes modules in reverse
 * order of construction.
 */
export interface AppModule {
  /** Its services, as named members (`service`, and any other a later module or `Plinth` needs). */
  readonly [member: string]: unknown
  routers?(guards: RouteGuards): OpenAPIHono<AppEnv>[]
  /** Routers that bound their own request bodies (signed uploads), mounted before the body limit. */
  streamingRouters?(guards: RouteGuards): OpenAPIHono<AppEnv>[]
  close?(): Promise<void>
}
