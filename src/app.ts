import type { OpenAPIHono } from '@hono/zod-openapi'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import { createHttpApp } from './http/create-http-app.js'
import { systemClock, type Clock } from './lib/clock.js'
import { createDatabaseRegistry, runMigrations, type DatabaseRegistry } from './lib/db/index.js'
import type { AppBindings, AppEnv } from './lib/http/index.js'
import { createLoggers, type Logger } from './lib/log.js'
import { systemMigrations } from './migrations/system/index.js'
import { createProjectsService, type Project, type ProjectsService } from './modules/projects/index.js'
import { createSystemService, systemRoutes } from './modules/system/index.js'

export interface AppOptions {
  /** Where log lines go (stdout by default); tests capture them. */
  logDestination?: DestinationStream
  clock?: Clock
}

export interface Plinth {
  readonly config: Config
  readonly log: Logger
  /** The one-line-per-request log, written by the transport. */
  readonly access: Logger
  readonly registry: DatabaseRegistry
  readonly defaultProject: Project
  readonly projects: ProjectsService
  readonly http: OpenAPIHono<AppEnv>
  /** The request handler; under Node, `env` carries the raw request and response (see lib/http/env.ts). */
  readonly fetch: (request: Request, env?: AppBindings) => Response | Promise<Response>
  /** Closes every database; the HTTP server is stopped first by its owner. */
  close(): Promise<void>
}

/** Wires config, lib and modules together, once. Runs pending migrations and ensures the default project. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<Plinth> {
  const { log, access } = createLoggers(config.logLevel, options.logDestination)
  const clock = options.clock ?? systemClock
  const registry = await createDatabaseRegistry({
    kind: config.database.kind,
    dataDir: config.dataDir,
    postgresUrl: config.database.kind === 'postgres' ? config.database.url : undefined,
    onPoolError: (err) => log.warn({ err }, 'idle database connection lost'),
  })
  try {
    await migrateSystem(registry, log)
    const projects = createProjectsService({ registry, clock })
    const defaultProject = await projects.ensureDefault()

    const system = createSystemService({
      version: config.version,
      database: config.database.kind,
      storage: config.storage.kind,
      cache: config.redisUrl ? 'redis' : 'memory',
      emailChannel: config.email.channel,
    })
    const http = createHttpApp({
      log,
      version: config.version,
      publicUrl: config.publicUrl,
      corsOrigins: config.corsOrigins,
      maxBodyBytes: config.maxBodyBytes,
      routers: [systemRoutes(system)],
    })
    return {
      config,
      log,
      access,
      registry,
      defaultProject,
      projects,
      http,
      fetch: (request, env) => http.fetch(request, env),
      close: () => registry.close(),
    }
  } catch (err) {
    await registry.close()
    throw err
  }
}

/** Applies pending system migrations; `plinth migrate` runs the same. */
export async function migrateSystem(registry: DatabaseRegistry, log: Logger): Promise<string[]> {
  const applied = await runMigrations(registry.system.db, registry.kind, systemMigrations)
  if (applied.length > 0) log.info({ applied }, 'migrations applied')
  return applied
}
