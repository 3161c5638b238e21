import { OpenAPIHono } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import { rejectInvalid, type AppEnv } from '../lib/http/index.js'
import type { Logger } from '../lib/log.js'
import { limitBody } from './body.js'
import { renderError, renderNotFound } from './errors.js'
import { openapiRoutes } from './openapi.js'
import { routedPath } from './paths.js'
import { inSpecificOrder } from './route-order.js'

export interface HttpOptions {
  log: Logger
  version: string
  publicUrl: string
  corsOrigins: readonly string[]
  maxBodyBytes: number
  /** Module routers, mounted at the root: each declares its full paths; their order does not matter (route-order.ts). */
  routers: OpenAPIHono<AppEnv>[]
  /** Routers that bound their own request bodies (signed uploads), mounted before the body limit. */
  streamingRouters?: OpenAPIHono<AppEnv>[]
}

/**
 * Assembles the HTTP app: the module routes, the API description, errors. Request ids, version headers
 * and the access log belong to the transport (transport.ts), so a GET route runs with no middleware.
 */
export function createHttpApp(options: HttpOptions): OpenAPIHono<AppEnv> {
  const { log } = options
  const app = new OpenAPIHono<AppEnv>({ getPath: routedPath, defaultHook: rejectInvalid })

  if (options.corsOrigins.length > 0) app.use(corsFor(options.corsOrigins))
  // Handlers run in the order they were added: these answer before limitBody is reached.
  app.route('/', inSpecificOrder(options.streamingRouters ?? []))
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], '*', limitBody(options.maxBodyBytes))

  app.route('/', inSpecificOrder(options.routers))
  app.route('/', openapiRoutes(app, { version: options.version, publicUrl: options.publicUrl }))

  app.onError((err, c) => renderError(err, c, log))
  app.notFound(renderNotFound)
  return app
}

function corsFor(origins: readonly string[]): MiddlewareHandler<AppEnv> {
  const any = origins.includes('*')
  const allowed = new Set(origins)
  return cors({
    origin: (origin) => (any ? '*' : allowed.has(origin) ? origin : null),
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'X-Project-Id', 'X-Request-ID'],
    exposeHeaders: [
      'X-API-Version',
      'X-Request-ID',
      'Deprecation',
      'Link',
      'Retry-After',
      'Content-Disposition',
      'ETag',
    ],
    maxAge: 600,
  })
}
