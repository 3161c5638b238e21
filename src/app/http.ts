import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Config } from '../config.js'
import { createHttpApp } from '../http/create-http-app.js'
import type { AppEnv } from '../lib/http/index.js'
import type { Logger } from '../lib/log.js'
import type { AppModule, RouteGuards } from '../lib/module.js'
import type { AppModules } from './modules.js'

/** The HTTP app over every module's routers, mounted with the guards, which exist once auth and records do. */
export function createAppHttp(
  config: Config,
  log: Logger,
  built: AppModules,
  modules: readonly AppModule[],
): OpenAPIHono<AppEnv> {
  const { security } = built.auth
  const guards: RouteGuards = {
    security,
    readSecurity: { authenticate: security.authenticate, authorize: built.records.anonymousGate },
  }
  return createHttpApp({
    log,
    version: config.version,
    publicUrl: config.publicUrl,
    corsOrigins: config.corsOrigins,
    maxBodyBytes: config.maxBodyBytes,
    routers: modules.flatMap((m) => m.routers?.(guards) ?? []),
    streamingRouters: modules.flatMap((m) => m.streamingRouters?.(guards) ?? []),
  })
}
