import type { OpenAPIHono } from '@hono/zod-openapi'
import { createAppHttp, createAppMetrics } from './app/http.js'
import { createAppContext } from './app/context.js'
import { appModules } from './app/modules.js'
import type { AppOptions } from './app/options.js'
import { servicesOf, type PlinthServices } from './app/services.js'
import { closeApp, closeModules } from './app/shutdown.js'
import type { Config } from './config.js'
import { systemClock } from './lib/clock.js'
import type { RequestObserver } from './http/transport.js'
import type { DatabaseRegistry } from './lib/db/index.js'
import type { EventBus } from './lib/events/index.js'
import type { AppBindings, AppEnv } from './lib/http/index.js'
import { createLoggers, type Logger } from './lib/log.js'
import type { AppModule } from './lib/module.js'
import type { JobQueue } from './lib/queue/index.js'
import type { ObjectStorage } from './lib/storage/index.js'
import type { Project, ProjectsService } from './modules/projects/index.js'
import type { Realtime } from './modules/realtime/index.js'
import type { RecordsService } from './modules/records/index.js'
import type { FilesService } from './modules/files/index.js'
import { closeAll, createPlatform, type PlinthEvents } from './platform.js'
import { startupWarnings } from './startup-warnings.js'

export type { AppOptions } from './app/options.js'
export type { PlinthServices } from './app/services.js'
export { migrateSystem } from './platform.js'

export interface Plinth {
  readonly config: Config
  readonly log: Logger
  /** The one-line-per-request log, written by the transport. */
  readonly access: Logger
  readonly registry: DatabaseRegistry
  readonly defaultProject: Project
  readonly projects: ProjectsService
  /** The records API in process: hooks for blocking write checks, and what flows will build on. */
  readonly records: RecordsService
  /** In-process events (user.login, record.create|update|delete, file.upload, collection.update). */
  readonly events: EventBus<PlinthEvents>
  /** Realtime record streams (SSE and WebSocket) served by this instance. */
  readonly realtime: Realtime
  /** Object storage for files: the local disk, or an S3-compatible store (S3_*). */
  readonly storage: ObjectStorage
  /** The files API in process (uploads, downloads, the cleanup sweep). */
  readonly files: FilesService
  /** Background jobs and cron schedules: in process, or shared by every instance through Redis (REDIS_URL). */
  readonly queue: JobQueue
  readonly http: OpenAPIHono<AppEnv>
  /**
   * Counts each answered request for GET /metrics; `listen` takes it as `observe`. Undefined when
   * METRICS_TOKEN is unset (metrics are off).
   */
  readonly observeRequest: RequestObserver | undefined
  /** The services in process (flows, tools, tests); each checks the acting principal's permission itself. */
  readonly services: PlinthServices
  /** The request handler; under Node, `env` carries the raw request and response (see lib/http/env.ts). */
  readonly fetch: (request: Request, env?: AppBindings) => Response | Promise<Response>
  /** Closes every database and connection; the HTTP server is stopped first by its owner. */
  close(): Promise<void>
}

/**
 * Wires config, lib and modules together, once: the platform (registry and system migrations, shared
 * state, queue, mail, events, storage), then the module list (app/modules.ts) in order, each module built
 * from those above it, then the HTTP app from every module's routers.
 */
export async function createApp(config: Config, options: AppOptions = {}): Promise<Plinth> {
  const { log, access: accessLog } = createLoggers(config.logLevel, options.logDestination)
  for (const warning of startupWarnings(config)) log.warn(warning)
  const clock = options.clock ?? systemClock
  const platform = await createPlatform(config, clock, log)
  // Modules in the order they were built; they close in reverse, after the queue and before the platform.
  const modules: AppModule[] = []
  try {
    const context = createAppContext({ config, options, platform, clock, log })
    const m = await appModules.compose(context, (module) => modules.push(module))
    const metrics = createAppMetrics(config, m, platform.queue)
    // Closed with the modules (first, being last), so a failed start-up stops its sampling too.
    if (metrics) modules.push({ close: async () => metrics.close() })
    const http = createAppHttp(config, log, m, modules, metrics)
    return {
      config,
      log,
      access: accessLog,
      registry: platform.registry,
      defaultProject: m.projects.defaultProject,
      projects: m.projects.service,
      records: m.records.service,
      events: platform.events,
      realtime: m.realtime.service,
      storage: platform.storage,
      files: m.files.service,
      queue: platform.queue,
      http,
      observeRequest: metrics?.observe,
      services: servicesOf(m),
      fetch: (request, env) => http.fetch(request, env),
      close: () => closeApp(platform, modules, log),
    }
  } catch (err) {
    await closeAll([() => closeModules(modules, log), () => platform.close()], log)
    throw err
  }
}
