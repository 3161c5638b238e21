import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Config } from '../config.js'
import { createHttpApp } from '../http/create-http-app.js'
import { createMetrics, metricsRoutes, type Metrics } from '../http/metrics/index.js'
import type { AppEnv } from '../lib/http/index.js'
import type { Logger } from '../lib/log.js'
import type { JobQueue } from '../lib/queue/index.js'
import type { AppModule, RouteGuards } from '../lib/module.js'
import type { AppModules } from './modules.js'

/**
 * This instance's metrics when METRICS_TOKEN is set (docs/running.md#metrics), read from the modules that
 * hold the figures; null otherwise, and nothing is counted.
 */
export function createAppMetrics(config: Config, built: AppModules, queue: JobQueue): Metrics | null {
  if (config.metricsToken === null) return null
  const runs = built.automate.runMetrics
  return createMetrics({
    version: config.version,
    sources: {
      realtimeStreams: () => built.realtime.service.openStreams(),
      activeRuns: runs.activeAcrossProjects,
      endedRuns: runs.endedByStatus,
      queueDepth: () => queue.depth(),
    },
  })
}

/** The HTTP app over every module's routers, mounted with the guards, which exist once auth and records do. */
export function createAppHttp(
  config: Config,
  log: Logger,
  built: AppModules,
  modules: readonly AppModule[],
  metrics: Metrics | null = null,
): OpenAPIHono<AppEnv> {
  const { security } = built.auth
  const guards: RouteGuards = {
    security,
    readSecurity: { authenticate: security.authenticate, authorize: built.records.anonymousGate },
  }
  const http = createHttpApp({
    log,
    version: config.version,
    publicUrl: config.publicUrl,
    corsOrigins: config.corsOrigins,
    maxBodyBytes: config.maxBodyBytes,
    routers: [
      ...modules.flatMap((m) => m.routers?.(guards) ?? []),
      ...(metrics && config.metricsToken ? [metricsRoutes(metrics, config.metricsToken)] : []),
    ],
    streamingRouters: modules.flatMap((m) => m.streamingRouters?.(guards) ?? []),
  })
  metrics?.useRoutes(http.routes)
  return http
}
