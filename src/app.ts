import type { OpenAPIHono } from '@hono/zod-openapi'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import { createHttpApp } from './http/create-http-app.js'
import { systemClock, type Clock } from './lib/clock.js'
import type { DatabaseRegistry } from './lib/db/index.js'
import type { EventBus } from './lib/events/index.js'
import type { AppBindings, AppEnv } from './lib/http/index.js'
import { createLoggers, type Logger } from './lib/log.js'
import type { AppModule, RouteGuards } from './lib/module.js'
import type { JobQueue } from './lib/queue/index.js'
import type { ObjectStorage } from './lib/storage/index.js'
import { closeAll, createPlatform, type PlinthEvents } from './platform.js'
import { startupWarnings } from './startup-warnings.js'
import { createAccessModule, type AccessService } from './modules/access/index.js'
import { createApiKeysModule, type ApiKeysService } from './modules/apikeys/index.js'
import { createAuditLog, createAuditModule, type AuditService } from './modules/audit/index.js'
import { createAuthModule, type Recovery } from './modules/auth/index.js'
import { createCapabilityTokensModule, type CapabilityTokensService } from './modules/capability-tokens/index.js'
import { createCollectionsModule, type CollectionsService } from './modules/collections/index.js'
import { createDatabasesModule, type DatabasesService } from './modules/databases/index.js'
import { createFilesModule, type FilesService } from './modules/files/index.js'
import { createProjectsModule, type Project, type ProjectsService } from './modules/projects/index.js'
import { createRealtimeModule, type Realtime, type RealtimeOptions } from './modules/realtime/index.js'
import { createFileReferences, createRecordsModule, type ImportPacePoint, type RecordsService, type SharesService } from './modules/records/index.js'
import type { BulkDelete, ImportJobs, RecordExporter, RecordImporter, Transfer, Truncate } from './modules/records/index.js'
import { createSettingsModule, type SettingsService } from './modules/settings/index.js'
import { createStorageConnectionsModule, type StorageConnectionsService } from './modules/storage-connections/index.js'
import { createStorageObjectsModule } from './modules/storage-objects/index.js'
import { createStructureModule, type StructureService } from './modules/structure/index.js'
import { createSystemModule } from './modules/system/index.js'
import { createUsersModule, type UsersService } from './modules/users/index.js'

export { migrateSystem } from './platform.js'

export interface AppOptions {
  /** Where log lines go (stdout by default); tests capture them. */
  logDestination?: DestinationStream
  clock?: Clock
  /** Awaited before every batch of a background structure scan or repair job; tests hold jobs mid-run with it. */
  structureJobPace?: () => Promise<void>
  /** Awaited at fixed points of every NDJSON import write; tests hold or fail a chunk there (crash, race). */
  importPace?: (point: ImportPacePoint) => Promise<void>
  /** Realtime stream tuning (heartbeat interval, slow-client buffer cap); tests shorten them. */
  realtime?: RealtimeOptions
  /** Wraps the object storage the files module uses; tests inject storage faults with it. */
  filesStorage?: (storage: ObjectStorage) => ObjectStorage
  /** Awaited after a session's or API key's database reads, before the result is cached; tests hold a load there to race an invalidation against it. */
  credentialLoadPace?: (kind: 'session' | 'api_key') => Promise<void>
}

/** Every module's service, as in-process callers (flows, tools, tests) reach them; each checks the acting principal itself. */
export interface PlinthServices {
  readonly access: AccessService
  readonly users: UsersService
  readonly settings: SettingsService
  readonly audit: AuditService
  readonly projects: ProjectsService
  readonly databases: DatabasesService
  readonly storageConnections: StorageConnectionsService
  readonly collections: CollectionsService
  readonly structure: StructureService
  readonly records: RecordsService
  readonly shares: SharesService
  readonly dataTools: { readonly bulk: BulkDelete; readonly transfer: Transfer; readonly truncate: Truncate }
  readonly exchange: { readonly exporter: RecordExporter; readonly importer: RecordImporter; readonly jobs: ImportJobs }
  readonly files: FilesService
  readonly capabilityTokens: CapabilityTokensService
  readonly apiKeys: ApiKeysService
  readonly recovery: Recovery
  readonly realtime: Realtime
}

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
  /** In-process events (user.login, record.create|update|delete, file.upload). */
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
  /** The services in process (flows, tools, tests); each checks the acting principal's permission itself. */
  readonly services: PlinthServices
  /** The request handler; under Node, `env` carries the raw request and response (see lib/http/env.ts). */
  readonly fetch: (request: Request, env?: AppBindings) => Response | Promise<Response>
  /** Closes every database and connection; the HTTP server is stopped first by its owner. */
  close(): Promise<void>
}

/**
 * Wires config, lib and modules together, once: the platform (registry and system migrations, shared
 * state, queue, mail, events, storage), then each module's factory in dependency order. A module gets
 * what was built before it; where an earlier module must hear from a later one, the later one registers
 * at its own construction (users.onChange, collections.onRemoved and fieldChanges,
 * access.grantFilterChecks, records' write hooks), so nothing is bound late (decision 023).
 */
export async function createApp(config: Config, options: AppOptions = {}): Promise<Plinth> {
  const { log, access: accessLog } = createLoggers(config.logLevel, options.logDestination)
  for (const warning of startupWarnings(config)) log.warn(warning)
  const clock = options.clock ?? systemClock
  const platform = await createPlatform(config, clock, log)
  const { registry, pubsub, limiter, writeVersions, queue, mailer, events, storage } = platform
  const { secretKey, publicUrl, allowPrivateNetwork, auth: authConfig } = config
  const systemDb = registry.system.db
  const base = { systemDb, clock, log }
  const pace = options.credentialLoadPace
  // Modules in the order they were built; they close in reverse, after the queue and before the platform.
  const modules: AppModule[] = []
  const built = <M extends AppModule>(module: M): M => (modules.push(module), module)
  const closeModules = () => closeAll(modules.toReversed().flatMap((m) => (m.close ? [m.close] : [])), log)
  try {
    const auditLog = createAuditLog(base)
    const access = built(await createAccessModule({ ...base, pubsub, audit: auditLog }))
    const audit = built(createAuditModule({ auditLog, access: access.service })).service
    const settings = built(await createSettingsModule({ systemDb, clock, pubsub, audit, access: access.service })).service
    const projects = built(await createProjectsModule({ registry, clock, audit, access: access.service }))
    const requireEmail = (projectId: string) => settings.get(projectId, 'auth.requireEmail')
    const { passwordIterations } = authConfig
    const users = built(createUsersModule({ systemDb, clock, dbKind: registry.kind, access: access.service, audit, passwordIterations, requireEmail }))
    const keyLoadPace = pace && (() => pace('api_key'))
    const apiKeys = built(await createApiKeysModule({ systemDb, clock, access: access.service, audit, pubsub, users: users.service, loadPace: keyLoadPace })).service
    const auth = built(await createAuthModule({
      ...base, pubsub, mailer, limiter, events, secretKey, publicUrl, passwordIterations,
      users: users.service, userChanges: users.onChange, apiKeys, access: access.service, projects: projects.service, settings, audit,
      defaultProjectId: projects.defaultProject.id, trustedOrigins: config.corsOrigins, trustProxy: config.trustProxy, oauth: config.oauth,
      sessionTtlSeconds: authConfig.sessionTtlSeconds, rateLimitPerMinute: authConfig.rateLimitPerMinute, sessionLoadPace: pace && (() => pace('session')),
    }))
    const collections = built(await createCollectionsModule({ ...base, registry, access: access.service, pubsub, audit }))
    const databases = built(createDatabasesModule({ ...base, secretKey, audit, registry, dataDir: config.dataDir, collections: collections.service, access: access.service })).service
    const storageConnections = built(createStorageConnectionsModule({ ...base, secretKey, audit, access: access.service, allowPrivateNetwork })).service
    const files = built(createFilesModule({
      ...base, systemKind: registry.system.kind, storage: options.filesStorage?.(storage) ?? storage, access: access.service, settings, events,
      collections: collections.service, removedCollections: collections.onRemoved, referencedFiles: createFileReferences(collections.service),
    })).service
    const records = built(createRecordsModule({
      ...base, collections: collections.service, access: access.service, grantFilterChecks: access.grantFilterChecks, settings, users: users.service, audit,
      events, writeVersions, readableFiles: (principal, ids) => files.readable(principal, ids), importPace: options.importPace,
    }))
    const open = records.service.open
    const structure = built(createStructureModule({
      ...base, collections: collections.service, fieldChanges: collections.fieldChanges, records: records.service, access: access.service, settings,
      pace: options.structureJobPace,
    })).service
    const capabilities = built(createCapabilityTokensModule({ secretKey, clock, open, users: users.service, access: access.service })).service
    const realtime = built(await createRealtimeModule({ ...options.realtime, events, pubsub, open, clock, log, authenticate: auth.security.authenticate, capabilities })).service
    const cache = config.redisUrl ? 'redis' : 'memory'
    built(createSystemModule({ version: config.version, database: config.database.kind, storage: config.storage.kind, cache, emailChannel: config.email.channel }))
    built(createStorageObjectsModule(storage))

    const services: PlinthServices = Object.freeze({
      access: access.service, users: users.service, settings, audit, projects: projects.service, databases, storageConnections,
      collections: collections.service, structure, records: records.service, shares: records.shares, dataTools: records.dataTools,
      exchange: records.exchange, files, capabilityTokens: capabilities, apiKeys, recovery: auth.recovery, realtime,
    })
    const guards: RouteGuards = { security: auth.security, readSecurity: { authenticate: auth.security.authenticate, authorize: records.anonymousGate } }
    const http = createHttpApp({
      log, version: config.version, publicUrl, corsOrigins: config.corsOrigins, maxBodyBytes: config.maxBodyBytes,
      routers: modules.flatMap((m) => m.routers?.(guards) ?? []),
      streamingRouters: modules.flatMap((m) => m.streamingRouters?.(guards) ?? []),
    })
    return {
      config, log, access: accessLog, registry, defaultProject: projects.defaultProject, projects: projects.service, records: records.service,
      events, realtime, storage, files, queue, http, services,
      fetch: (request, env) => http.fetch(request, env),
      // A running job may use any module, so the queue stops (waiting for its jobs) before anything else closes.
      close: () => closeAll([() => queue.close(), closeModules, () => platform.close()], log),
    }
  } catch (err) {
    await closeAll([closeModules, () => platform.close()], log)
    throw err
  }
}
