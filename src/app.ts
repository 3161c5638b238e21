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
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './lib/ratelimit/index.js'
import { systemMigrations } from './migrations/system/index.js'
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
  recoveryRoutes,
  type AuthEvents,
} from './modules/auth/index.js'
import { collectionsRoutes, createCollectionsService } from './modules/collections/index.js'
import { createDatabasesService, databasesRoutes, type DatabasesService } from './modules/databases/index.js'
import { createProjectsService, projectsRoutes, type Project, type ProjectsService } from './modules/projects/index.js'
import { createRecordAccess, createRecordsService, createSharesService, createSharesStore, createWriteHooks, recordsRoutes, shareRoutes, type RecordEvents, type RecordsService } from './modules/records/index.js'
import { createSettingsService, settingsRoutes } from './modules/settings/index.js'
import { createSystemService, systemRoutes } from './modules/system/index.js'
import { createUsersService, usersRoutes, type UserChange } from './modules/users/index.js'

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
  /** The records API in process: hooks for blocking write checks, and what flows will build on. */
  readonly records: RecordsService
  /** In-process events (user.login, record.create|update|delete). */
  readonly events: EventBus<AuthEvents & RecordEvents>
  readonly http: OpenAPIHono<AppEnv>
  /** The request handler; under Node, `env` carries the raw request and response (see lib/http/env.ts). */
  readonly fetch: (request: Request, env?: AppBindings) => Response | Promise<Response>
  /** Closes every database and connection; the HTTP server is stopped first by its owner. */
  close(): Promise<void>
}

/** Wires config, lib and modules together, once. Runs pending migrations and ensures the default project. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<Plinth> {
  const { log, access: accessLog } = createLoggers(config.logLevel, options.logDestination)
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
    const mailer: Mailer = createMailer(config.email, { log })
    closers.unshift(() => mailer.close())
    const events = createEventBus<AuthEvents & RecordEvents>(log)

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
    const sessions = await createSessions({ store: authStore, users, clock, pubsub, ttlSeconds: config.auth.sessionTtlSeconds })
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
    })
    closers.unshift(() => sessions.close(), () => apiKeys.close())
    onUserChange = async (userId, change) => {
      if (change === 'profile' || change === 'role') await sessions.refreshUser(userId)
      else await sessions.revokeUser(userId)
      if (change !== 'profile' && change !== 'password') await apiKeys.forgetUser(userId)
    }

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
    const sweep = setInterval(() => {
      authStore.deleteExpiredSessions(clock.seconds()).catch((err: unknown) => log.warn({ err }, 'expired session sweep failed'))
    }, 10 * 60_000)
    sweep.unref()
    closers.unshift(async () => clearInterval(sweep))

    databases = createDatabasesService({ systemDb, clock, box: createSecretBox(config.secretKey, 'database-bindings'), audit, registry: () => registry })
    const readSecurity: Security = { authenticate: security.authenticate, authorize: async () => {} }
    const shares = createSharesStore(systemDb)
    const recordAccess = createRecordAccess({ access, shares })
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
    })
    closers.unshift(() => collections.close())
    const records = createRecordsService({
      collections,
      access,
      recordAccess,
      settings,
      shares,
      events,
      hooks: createWriteHooks(),
      clock,
      log,
    })

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
        ...collectionsRoutes(collections, security, readSecurity),
        recordsRoutes(records, readSecurity),
        shareRoutes(createSharesService({ open: records.open, store: shares, users, collections, clock }), readSecurity),
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
      http,
      fetch: (request, env) => http.fetch(request, env),
      close: () => closeAll(closers, log),
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
