import type { OpenAPIHono } from '@hono/zod-openapi'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import { createHttpApp } from './http/create-http-app.js'
import { systemClock, type Clock } from './lib/clock.js'
import { createSecretBox } from './lib/crypto/index.js'
import { createDatabaseRegistry, runMigrations, type DatabaseRegistry } from './lib/db/index.js'
import { createEventBus, type EventBus } from './lib/events/index.js'
import type { AppBindings, AppEnv, Security } from './lib/http/index.js'
import { createLoggers, type Logger } from './lib/log.js'
import { createMailer, type Mailer } from './lib/mail/index.js'
import { createMemoryPubSub, createRedisPubSub, type PubSub } from './lib/pubsub/index.js'
import { createMemoryQueue, createRedisQueue, type JobQueue } from './lib/queue/index.js'
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './lib/ratelimit/index.js'
import { createStorage, type ObjectStorage } from './lib/storage/index.js'
import { systemMigrations } from './migrations/system/index.js'
import { startupWarnings } from './startup-warnings.js'
import { accessRoutes, createAccessService } from './modules/access/index.js'
import { apiKeysRoutes, createApiKeysService } from './modules/apikeys/index.js'
import { auditRoutes, createAuditService } from './modules/audit/index.js'
import {
  authRoutes,
  createAuthContext,
  createAuthenticate,
  createAuthService,
  createAuthStore,
  createRecovery,
  createSessions,
  createSocial,
  createUserChanges,
  recoveryRoutes,
  type AuthEvents,
} from './modules/auth/index.js'
import { collectionsRoutes, createCollectionsService } from './modules/collections/index.js'
import { createDatabasesService, databasesRoutes, type DatabasesService } from './modules/databases/index.js'
import { createProjectsService, projectsRoutes, type Project, type ProjectsService } from './modules/projects/index.js'
import { createRecordAccess, createRecordsService, createSharesService, createSharesStore, createWriteHooks, recordsRoutes, shareRoutes, type RecordEvents, type RecordsService } from './modules/records/index.js'
import { createBulkDelete, createTransfer, createTruncate, recordDataRoutes } from './modules/records/index.js'
import { createImportJobs, createRecordExporter, createRecordImporter, recordExchangeRoutes, type ImportPacePoint } from './modules/records/index.js'
import { createFileReferences, type ReadableFiles } from './modules/records/index.js'
import { createSettingsService, settingsRoutes } from './modules/settings/index.js'
import { capabilityTokensRoutes, createCapabilityTokensService } from './modules/capability-tokens/index.js'
import { createRealtime, createStreamAuth, realtimeRoutes, type Realtime, type RealtimeOptions } from './modules/realtime/index.js'
import { createStructureService, structureRoutes, type StructureService } from './modules/structure/index.js'
import { createS3Probe, createStorageConnectionsService, storageConnectionsRoutes } from './modules/storage-connections/index.js'
import { storageObjectRoutes } from './modules/storage-objects/index.js'
import { createSystemService, systemRoutes } from './modules/system/index.js'
import { createFilesService, filesRoutes, filesStreamingRoutes, type FileEvents, type FilesService } from './modules/files/index.js'
import { createUsersService, usersRoutes, type UserChange } from './modules/users/index.js'

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
  readonly events: EventBus<AuthEvents & RecordEvents & FileEvents>
  /** Realtime record streams (SSE and WebSocket) served by this instance. */
  readonly realtime: Realtime
  /** Object storage for files: the local disk, or an S3-compatible store (S3_*). */
  readonly storage: ObjectStorage
  /** The files API in process (uploads, downloads, the cleanup sweep). */
  readonly files: FilesService
  /** Background jobs and cron schedules: in process, or shared by every instance through Redis (REDIS_URL). */
  readonly queue: JobQueue
  readonly http: OpenAPIHono<AppEnv>
  /** The request handler; under Node, `env` carries the raw request and response (see lib/http/env.ts). */
  readonly fetch: (request: Request, env?: AppBindings) => Response | Promise<Response>
  /** Closes every database and connection; the HTTP server is stopped first by its owner. */
  close(): Promise<void>
}

/** Wires config, lib and modules together, once. Runs pending migrations and ensures the default project. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<Plinth> {
  const { log, access: accessLog } = createLoggers(config.logLevel, options.logDestination)
  for (const warning of startupWarnings(config)) log.warn(warning)
  const clock = options.clock ?? systemClock
  const closers: (() => Promise<void>)[] = []
  // Registered bindings are looked up through the databases module, which needs the registry itself.
  let databases: DatabasesService | undefined
  const registry = await createDatabaseRegistry({
    kind: config.database.kind,
    dataDir: config.dataDir,
    postgresUrl: config.database.kind === 'postgres' ? config.database.url : undefined,
    onPoolError: (err) => log.warn({ err }, 'idle database connection lost'),
    resolveBinding: async (projectId, bindingId) => (databases ? databases.resolve(projectId, bindingId) : null),
  })
  closers.push(() => registry.close())
  try {
    await migrateSystem(registry, log)
    const systemDb = registry.system.db
    const { pubsub, limiter } = await createSharedState(config, clock, log)
    closers.unshift(() => pubsub.close(), () => limiter.close())
    const queue = await createJobQueue(config, clock, log)
    closers.unshift(() => queue.close())
    const mailer: Mailer = createMailer(config.email, { log })
    closers.unshift(() => mailer.close())
    const events = createEventBus<AuthEvents & RecordEvents & FileEvents>(log)
    const storage = await createStorage({ settings: config.storage, dataDir: config.dataDir, publicUrl: config.publicUrl, secretKey: config.secretKey, clock })
    closers.unshift(() => storage.close())

    const audit = createAuditService({ systemDb, clock, log })
    const access = await createAccessService({ systemDb, clock, pubsub, audit, log })
    const settings = await createSettingsService({ systemDb, clock, pubsub, audit })
    closers.unshift(() => access.close(), () => settings.close())
    const projects = createProjectsService({ registry, clock, audit, onCreated: (id) => access.seedBuiltInRoles(id) })
    const defaultProject = await projects.ensureDefault()
    for (const project of await projects.list()) await projects.prepare(project.id)

    // Users tell sessions and keys about changes; those are built next, so the hook binds late.
    let onUserChange: (userId: string, change: UserChange) => Promise<void> = async () => {}
    const users = createUsersService({
      systemDb,
      dbKind: registry.kind,
      access,
      audit,
      clock,
      passwordIterations: config.auth.passwordIterations,
      requireEmail: (projectId) => settings.get(projectId, 'auth.requireEmail'),
      onChange: (userId, change) => onUserChange(userId, change),
    })
    const authStore = createAuthStore(systemDb)
    const pace = options.credentialLoadPace
    const sessions = await createSessions({
      store: authStore,
      users,
      clock,
      pubsub,
      ttlSeconds: config.auth.sessionTtlSeconds,
      loadPace: pace && (() => pace('session')),
    })
    const apiKeys = await createApiKeysService({
      systemDb,
      clock,
      access,
      audit,
      pubsub,
      creatorRole: async (userId) => {
        const user = await users.findRow(userId)
        return user && !user.banned ? user.role_id : null
      },
      loadPace: pace && (() => pace('api_key')),
    })
    closers.unshift(() => sessions.close(), () => apiKeys.close())
    onUserChange = createUserChanges({ store: authStore, sessions, apiKeys })

    const security: Security = {
      authenticate: createAuthenticate({ sessions, apiKeys, access, projects, defaultProjectId: defaultProject.id }),
      authorize: (principal, permission) => access.authorize(principal, permission),
    }
    const authContext = createAuthContext({
      store: authStore,
      sessions,
      users,
      access,
      settings,
      audit,
      mailer,
      limiter,
      events,
      clock,
      log,
      totpBox: createSecretBox(config.secretKey, 'totp'),
      defaultProjectId: defaultProject.id,
      publicUrl: config.publicUrl,
      trustedOrigins: config.corsOrigins,
      rateLimitPerMinute: config.auth.rateLimitPerMinute,
      passwordIterations: config.auth.passwordIterations,
      oauth: config.oauth,
    })
    const auth = createAuthService(authContext)
    const recovery = createRecovery(authContext)
    const social = createSocial(authContext)
    const sessionSweep = clock.every(10 * 60_000, () => authStore.deleteExpiredSessions(clock.seconds()), {
      onError: (err) => log.warn({ err }, 'expired session sweep failed'),
    })
    closers.unshift(() => sessionSweep.stop())

    const shares = createSharesStore(systemDb)
    const recordAccess = createRecordAccess({ access, shares })
    // Files read collections, and removed collections take their files: built later, bound late.
    let files: FilesService | undefined = undefined
    // Structure jobs and enforcement need records, which need collections: the hooks bind late.
    let structureHooks: StructureService['fieldChanges'] | null = null
    const collections = await createCollectionsService({
      systemDb,
      registry,
      clock,
      pubsub,
      audit,
      log,
      canRead: async (principal, collection) => {
        if (collection.accessControl?.preset === 'public') return true
        if ((await access.decide(principal, 'schema/*', 'read')).allowed) return true
        return (await access.decide(principal, `collections/${collection.name}`, 'read')).allowed
      },
      canReadSome: async (principal) =>
        (await access.decide(principal, 'schema/*', 'read')).allowed || (await access.reachesAny(principal, 'collections/*', 'read')),
      onRemoved: async (actor, projectId, names) => files?.removeOfCollections(actor, projectId, names),
      fieldChanges: {
        before: async (collection, next) => structureHooks?.before(collection, next),
        after: async (collection, next) => structureHooks?.after(collection, next),
      },
    })
    closers.unshift(() => collections.close())
    // Routes whose service decides who may do what: the caller is resolved, and an anonymous caller nothing
    // could be open to is 401 at once, before its input is validated (decision 012).
    const readSecurity: Security = { authenticate: security.authenticate, authorize: recordAccess.anonymousGate(collections) }
    // A grant naming a collection has its item_filter checked against that collection's fields when saved.
    access.useGrantFilterCheck(recordAccess.grantFilterCheck(collections))
    databases = createDatabasesService({
      systemDb,
      clock,
      box: createSecretBox(config.secretKey, 'database-bindings'),
      audit,
      registry: () => registry,
      dataDir: config.dataDir,
      collections,
      access,
      log,
      allowPrivateNetwork: config.allowPrivateNetwork,
    })
    const storageConnections = createStorageConnectionsService({
      systemDb,
      clock,
      box: createSecretBox(config.secretKey, 'storage-connections'),
      audit,
      log,
      probe: createS3Probe({ allowPrivateNetwork: config.allowPrivateNetwork }),
      allowPrivateNetwork: config.allowPrivateNetwork,
    })
    // A file field stores only files the writer may read; the files module answers (bound late: none before it exists).
    const readableFiles: ReadableFiles = async (principal, ids) => (files ? files.readable(principal, ids) : new Set())
    const recordDeps = { collections, access, recordAccess, settings, shares, readableFiles, events, hooks: createWriteHooks(), clock, log }
    const records = createRecordsService(recordDeps)
    const structureService = createStructureService({ systemDb, collections, records, access, settings, clock, log, pace: options.structureJobPace })
    structureHooks = structureService.fieldChanges
    records.hooks.add(structureService.warnOnWrite)
    closers.unshift(() => structureService.close())
    const dataTools = {
      bulk: createBulkDelete(recordDeps, records.open),
      transfer: createTransfer({ open: records.open, users, shares, collections, events, hooks: records.hooks, audit, clock }),
      truncate: createTruncate({ open: records.open, collections, shares, audit }),
    }

    const importJobs = createImportJobs({ systemDb, open: records.open, clock, log })
    closers.unshift(() => importJobs.close())
    const exchange = {
      exporter: createRecordExporter({ open: records.open, log }),
      importer: createRecordImporter({ open: records.open, hooks: records.hooks, events, jobs: importJobs, clock, pace: options.importPace }),
      jobs: importJobs,
    }

    files = createFilesService({
      systemDb,
      systemKind: registry.system.kind,
      storage: options.filesStorage?.(storage) ?? storage,
      access,
      collections,
      settings,
      events,
      referencedFiles: createFileReferences(collections),
      clock,
      log,
    })
    closers.unshift(() => files.close())

    const capabilityTokens = createCapabilityTokensService({ secretKey: config.secretKey, clock, open: records.open, users, access })
    const realtime = await createRealtime({ ...options.realtime, events, pubsub, open: records.open, clock, log })
    closers.unshift(() => realtime.close())
    const streamAuth = createStreamAuth(security.authenticate, capabilityTokens)

    const system = createSystemService({
      version: config.version,
      database: config.database.kind,
      storage: config.storage.kind,
      cache: config.redisUrl ? 'redis' : 'memory',
      emailChannel: config.email.channel,
    })
    const trust = { trustProxy: config.trustProxy, publicUrl: config.publicUrl, trustedOrigins: config.corsOrigins }
    const http = createHttpApp({
      log,
      version: config.version,
      publicUrl: config.publicUrl,
      corsOrigins: config.corsOrigins,
      maxBodyBytes: config.maxBodyBytes,
      // The local driver's signed URLs (an S3 store serves its own), and the files module's multipart routes.
      streamingRouters: [...(storage.kind === 'local' ? [storageObjectRoutes(storage)] : []), filesStreamingRoutes(files, security)],
      routers: [
        systemRoutes(system),
        authRoutes(auth, security, config.trustProxy),
        recoveryRoutes(recovery, social, security, trust),
        apiKeysRoutes(apiKeys, security),
        usersRoutes(users, security),
        accessRoutes(access, security),
        settingsRoutes(settings, security),
        projectsRoutes(projects, security),
        auditRoutes(audit, security),
        databasesRoutes(databases, security),
        storageConnectionsRoutes(storageConnections, security),
        ...collectionsRoutes(collections, security, readSecurity),
        // Before recordsRoutes: field options, scans and repairs live under /collections/:name/.
        ...structureRoutes(structureService, security, readSecurity),
        // Before recordsRoutes: /records/export, /records/import-jobs and /records/bulk are not record ids
        // (the first handler registered for a path answers).
        recordExchangeRoutes(exchange, readSecurity),
        ...recordDataRoutes(dataTools, security, readSecurity),
        recordsRoutes(records, readSecurity),
        shareRoutes(createSharesService({ open: records.open, store: shares, users, collections, clock }), readSecurity),
        capabilityTokensRoutes(capabilityTokens, security),
        filesRoutes(files, security),
        realtimeRoutes(realtime, streamAuth),
      ],
    })
    return {
      config,
      log,
      access: accessLog,
      registry,
      defaultProject,
      projects,
      records,
      events,
      realtime,
      storage,
      files,
      queue,
      http,
      fetch: (request, env) => http.fetch(request, env),
      // A running job may use any module, so the queue stops (waiting for its jobs) before anything else closes.
      close: () => closeAll([() => queue.close(), ...closers], log),
    }
  } catch (err) {
    await closeAll(closers, log)
    throw err
  }
}

/** Caches, rate limits and invalidation messages: in process, or shared through Redis (REDIS_URL). */
async function createSharedState(config: Config, clock: Clock, log: Logger): Promise<{ pubsub: PubSub; limiter: RateLimiter }> {
  if (!config.redisUrl) return { pubsub: createMemoryPubSub(), limiter: createMemoryRateLimiter({ clock }) }
  const onError = (err: unknown) => log.warn({ err }, 'redis error')
  const pubsub = await createRedisPubSub(config.redisUrl, config.redisPrefix, { onError })
  try {
    return { pubsub, limiter: await createRedisRateLimiter(config.redisUrl, `${config.redisPrefix}ratelimit:`, { onError }) }
  } catch (err) {
    await pubsub.close()
    throw err
  }
}

/** Background jobs: in process, or through Redis under the deployment's prefix; close() waits as long as a shutdown does. */
async function createJobQueue(config: Config, clock: Clock, log: Logger): Promise<JobQueue> {
  const options = { clock, log, closeTimeoutMs: config.shutdownTimeoutMs }
  if (!config.redisUrl) return createMemoryQueue(options)
  return createRedisQueue(config.redisUrl, config.redisPrefix, { ...options, onError: (err) => log.warn({ err }, 'redis error') })
}

async function closeAll(closers: (() => Promise<void>)[], log: Logger): Promise<void> {
  for (const close of closers) {
    try {
      await close()
    } catch (err) {
      log.warn({ err }, 'error while closing')
    }
  }
}

/** Applies pending system migrations; `plinth migrate` runs the same. */
export async function migrateSystem(registry: DatabaseRegistry, log: Logger): Promise<string[]> {
  const applied = await runMigrations(registry.system.db, registry.kind, systemMigrations)
  if (applied.length > 0) log.info({ applied }, 'migrations applied')
  return applied
}
