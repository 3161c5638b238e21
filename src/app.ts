import type { OpenAPIHono } from '@hono/zod-openapi'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import { createHttpApp } from './http/create-http-app.js'
import { systemClock, type Clock } from './lib/clock.js'
import type { DatabaseRegistry } from './lib/db/index.js'
import type { EventBus } from './lib/events/index.js'
import type { AppBindings, AppEnv } from './lib/http/index.js'
import { newId } from './lib/ids.js'
import { createLoggers, type Logger } from './lib/log.js'
import type { AppModule, RouteGuards } from './lib/module.js'
import type { JobQueue } from './lib/queue/index.js'
import { createOutboundClient, type OutboundOptions } from './lib/outbound/index.js'
import type { ObjectStorage } from './lib/storage/index.js'
import { closeAll, createPlatform, type PlinthEvents } from './platform.js'
import { startupWarnings } from './startup-warnings.js'
import { createAiProviders } from './lib/ai/index.js'
import { createAccessModule, type AccessService } from './modules/access/index.js'
import { createAiService } from './modules/ai/index.js'
import { createApiKeysModule, type ApiKeysService } from './modules/apikeys/index.js'
import { createAuditLog, createAuditModule, type AuditService } from './modules/audit/index.js'
import { createAuthModule, type Recovery } from './modules/auth/index.js'
import { createAutomateModule, type FlowsService, type QuotasService, type RunsService, type ScriptsService, type Triggers } from './modules/automate/index.js'
import { createCapabilityTokensModule, type CapabilityTokensService } from './modules/capability-tokens/index.js'
import { createCollectionsModule, type CollectionsService } from './modules/collections/index.js'
import { createDatabasesModule, type DatabasesService } from './modules/databases/index.js'
import { createEmailModule, type EmailService } from './modules/email/index.js'
import { createFilesModule, type FilesService } from './modules/files/index.js'
import { createLensesModule, type LensesService } from './modules/lenses/index.js'
import { createMcpModule, sharedDocsIndex, type DocsIndex, type McpService } from './modules/mcp/index.js'
import { createProjectsModule, type Project, type ProjectsService } from './modules/projects/index.js'
import { createRealtimeModule, type Realtime, type RealtimeOptions } from './modules/realtime/index.js'
import { createFileReferences, createRecordsModule, type Publish, type ImportPacePoint, type RecordsService, type SharesService } from './modules/records/index.js'
import type { BulkDelete, GeoImporter, ImportJobs, RecordExporter, RecordImporter, Transfer, Truncate } from './modules/records/index.js'
import { createSearchIndexesModule, type SearchIndexesService } from './modules/search-indexes/index.js'
import { createSettingsModule, type SettingsService } from './modules/settings/index.js'
import { createStorageConnectionsModule, type StorageConnectionsService } from './modules/storage-connections/index.js'
import { createNotificationsModule, type NotificationsService } from './modules/notifications/index.js'
import { createOperationsModule, type OperationRegistry, type OperationsService } from './modules/operations/index.js'
import { createStorageObjectsModule } from './modules/storage-objects/index.js'
import { createStructureModule, type StructureService } from './modules/structure/index.js'
import { createSystemModule } from './modules/system/index.js'
import { createUsersModule, type UsersService } from './modules/users/index.js'
import { createWebhooksModule, type DeliveryOptions, type WebhooksService } from './modules/webhooks/index.js'

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
  /** Wraps the database registry the collections module (and records, through it) uses; tests inject DDL faults with it. */
  collectionDatabases?: (registry: DatabaseRegistry) => DatabaseRegistry
  /** r2_sql timings (decision 036); tests shorten the quiet period after which a publish gives the writer claim up, or move the schedule out of their way. */
  r2Sql?: { quietMs?: number; publishPattern?: string }
  /** Wraps the operations registry flows are checked against; tests add operation types with it. */
  operations?: (registry: OperationRegistry) => OperationRegistry
  /** Outbound test hooks (lib/outbound: made-up names, a narrowed address rule); production passes none. */
  outbound?: Pick<OutboundOptions, 'resolve' | 'isBlocked'>
  /** Collection webhook retry tuning (tests shorten the backoff). */
  webhookDelivery?: Partial<DeliveryOptions>
  /** The docs index search_docs and get_doc_page read (tests pass a small fake); the project's docs/ pages otherwise. */
  mcpDocs?: DocsIndex
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
  readonly dataTools: { readonly bulk: BulkDelete; readonly transfer: Transfer; readonly truncate: Truncate; readonly publish: Publish }
  readonly exchange: { readonly exporter: RecordExporter; readonly importer: RecordImporter; readonly geoImporter: GeoImporter; readonly jobs: ImportJobs }
  readonly files: FilesService
  readonly capabilityTokens: CapabilityTokensService
  readonly apiKeys: ApiKeysService
  readonly recovery: Recovery
  readonly realtime: Realtime
  /** The automation operations catalog: save-time step checks and run-time config preparation. */
  readonly operations: OperationsService
  /** Automation flows (drafts, versions, runAs, export and import). */
  readonly automate: FlowsService
  /** Automation quotas: limits and usage per project. */
  readonly quotas: QuotasService
  /** Automation runs: execute, dry runs, the runs API. */
  readonly runs: RunsService
  /** Automation triggers in process: manual, webhook and api_endpoint calls, and startSubFlow (trigger_flow). */
  readonly triggers: Triggers
  /** Automation saved scripts (CRUD and test runs). */
  readonly scripts: ScriptsService
  /** Collection webhooks (CRUD, the delivery log); deliveries go through the queue. */
  readonly webhooks: WebhooksService
  /** Email: send_email's sending, the message delivery log (query_message_log), signed receipts. */
  readonly email: EmailService
  /** Search indexes: definitions, builds into SQLite FTS5 files in object storage, queries (decision 042). */
  readonly searchIndexes: SearchIndexesService
  /** In-app notifications: each user's inbox, and sending into one (send_notification, the system flows). */
  readonly notifications: NotificationsService
  /** Lenses: drafts, published versions, renders as the caller (issue 17, item 5). */
  readonly lenses: LensesService
  /** The tool server (issue 18): tools and resources read as an API key, the rate limit and the invocation log. */
  readonly mcp: McpService
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
  const { registry, pubsub, limiter, writeVersions, slots, queue, mailer, events, storage } = platform
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
    const collections = built(await createCollectionsModule({
      ...base, registry: options.collectionDatabases?.(registry) ?? registry, access: access.service, pubsub, audit,
      // Alone (no Redis), the instance keeps one name, so a restart finds its r2_sql working copies (decision 036).
      r2Sql: { ...options.r2Sql, storage, dataDir: config.dataDir, queue, instanceId: queue.shared ? newId() : 'local' },
    }))
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
    const searchIndexes = built(createSearchIndexesModule({
      ...base, access: access.service, audit, records: records.service, storage, dataDir: config.dataDir,
      searchIndexSeam: records.searchIndexes, removedCollections: collections.onRemoved,
    })).service
    // Requests made on a caller's behalf (flows' network steps, collection webhooks): the address rule of addendum §6.
    const outbound = createOutboundClient({ ...options.outbound, allowPrivateNetwork })
    // Lenses read through records as the caller; flows render them (render_lens_template), so before automate.
    const lenses = built(createLensesModule({ ...base, access: access.service, audit, records: records.service })).service
    const operations = built(createOperationsModule({ access: access.service, clock, log })).service
    const structure = built(createStructureModule({
      ...base, collections: collections.service, fieldChanges: collections.fieldChanges, records: records.service, access: access.service, settings,
      pace: options.structureJobPace,
    })).service
    const email = built(createEmailModule({ ...base, mailer, access: access.service, receiptSecret: config.email.receiptSecret })).service
    // Inboxes and each user's live channel (served as a stream by the realtime module, built later).
    const notifications = built(await createNotificationsModule({ systemDb, clock, pubsub, log, users: users.service, access: access.service }))
    const automate = built(await createAutomateModule({
      ...base, dbKind: registry.system.kind, pubsub, access: access.service, audit, publicUrl,
      operations: options.operations?.(operations) ?? operations, findUser: users.service.findRow, findApiKey: apiKeys.byId,
      limiter, slots, queue, services: { records: records.service, files, collections: collections.service, outbound, dataTools: records.dataTools, email, searchIndexes, notifications: notifications.service, settings, lenses, storageConnections },
      projects: projects.service, projectCreated: projects.onCreated,
      events, hooks: records.service.hooks, trustProxy: config.trustProxy,
      outbound, usage: [email.usage],
      // The ai_* operations' service: providers from CF_* / OPENAI_* (their base URLs reached on any address: the operator's, decision 039), the daily token quota, images as files (docs/ai.md).
      quotaServices: (quotas) => {
        const ai = createAiService({ systemDb, clock, providers: createAiProviders(config.ai), files, quotas })
        return { services: { ai: ai.steps }, close: ai.close }
      },
    }))
    const webhooks = built(await createWebhooksModule({
      ...base, pubsub, secretKey, audit, access: access.service, collections: collections.service, removedCollections: collections.onRemoved,
      allowPrivateNetwork, queue, events, outbound, delivery: options.webhookDelivery,
    })).service
    // The tool server (issue 18, decision 043): every tool and resource read as the key, through the services above.
    const mcp = built(createMcpModule({
      ...base, limiter, version: config.version, access: access.service,
      services: {
        records: records.service, collections: collections.service, access: access.service, flows: automate.service, email, settings,
        // search_docs / get_doc_page: the project's own docs/ pages, indexed once per process (docs/mcp-docs-search.md).
        docs: options.mcpDocs ?? (await sharedDocsIndex()),
      },
    })).service
    const capabilities = built(createCapabilityTokensModule({ secretKey, clock, open, users: users.service, access: access.service })).service
    const realtime = built(await createRealtimeModule({ ...options.realtime, events, pubsub, open, clock, log, authenticate: auth.security.authenticate, capabilities, inbox: notifications.live })).service
    const cache = config.redisUrl ? 'redis' : 'memory'
    built(createSystemModule({ version: config.version, database: config.database.kind, storage: config.storage.kind, cache, emailChannel: config.email.channel, emailReceipts: email.receipts }))
    built(createStorageObjectsModule(storage))

    const services: PlinthServices = Object.freeze({
      access: access.service, users: users.service, settings, audit, projects: projects.service, databases, storageConnections,
      collections: collections.service, structure, records: records.service, shares: records.shares, dataTools: records.dataTools,
      exchange: records.exchange, files, capabilityTokens: capabilities, apiKeys, recovery: auth.recovery, realtime, operations,
      automate: automate.service, quotas: automate.quotas, runs: automate.runs, triggers: automate.triggers,
      scripts: automate.scripts,
      webhooks, email, searchIndexes, notifications: notifications.service, lenses, mcp,
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
