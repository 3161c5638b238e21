import { createAiProviders } from '../lib/ai/index.js'
import { newId } from '../lib/ids.js'
import { createAccessModule } from '../modules/access/index.js'
import { createAiService } from '../modules/ai/index.js'
import { createApiKeysModule } from '../modules/apikeys/index.js'
import { createAuditModule } from '../modules/audit/index.js'
import { createAuthModule } from '../modules/auth/index.js'
import { createAutomateModule, createFlowFieldReferences } from '../modules/automate/index.js'
import { brickProviders, createBlueprintsModule } from '../modules/blueprints/index.js'
import { createCapabilityTokensModule } from '../modules/capability-tokens/index.js'
import { createContainersModule } from '../modules/containers/index.js'
import { createCollectionsModule } from '../modules/collections/index.js'
import { createDatabasesModule } from '../modules/databases/index.js'
import { createEmailModule } from '../modules/email/index.js'
import { createFilesModule } from '../modules/files/index.js'
import { createLensAttachmentsModule } from '../modules/lens-attachments/index.js'
import { createLensesModule, createLensFieldReferences } from '../modules/lenses/index.js'
import { createMcpModule, sharedDocsIndex } from '../modules/mcp/index.js'
import { createNavigationModule } from '../modules/navigation/index.js'
import { createNotificationsModule } from '../modules/notifications/index.js'
import { createOperationsModule } from '../modules/operations/index.js'
import { createProjectsModule } from '../modules/projects/index.js'
import { createRealtimeModule } from '../modules/realtime/index.js'
import { createFileReferences, createRecordsModule } from '../modules/records/index.js'
import { createRendererFieldReferences, createRenderersModule } from '../modules/renderers/index.js'
import { createSearchIndexesModule } from '../modules/search-indexes/index.js'
import { createSettingsModule } from '../modules/settings/index.js'
import { createStorageConnectionsModule } from '../modules/storage-connections/index.js'
import { createStorageObjectsModule } from '../modules/storage-objects/index.js'
import { createStructureModule } from '../modules/structure/index.js'
import { createSystemModule } from '../modules/system/index.js'
import { createUsersModule } from '../modules/users/index.js'
import { createViewFieldReferences, createViewsModule } from '../modules/views/index.js'
import { createWebhooksModule } from '../modules/webhooks/index.js'
import { moduleList } from './module-list.js'
import { createAdminUiModule } from '../modules/admin-ui/index.js'
import { createRolePreviewModule } from '../modules/role-preview/index.js'
import type { AppContext } from './context.js'

/**
 * Every module, in the order it is built (the table in docs/architecture.md): each entry gets only the
 * modules above it. Where an earlier module must hear from a later one, the later one registers at its own
 * construction (users.onChange, collections.onRemoved and fieldChanges, access.grantFilterChecks, records'
 * write hooks), so nothing is bound late (decision 023). They close in reverse order.
 */
export const appModules = moduleList<AppContext>()
  .add('access', (c) => createAccessModule({ ...c.base, pubsub: c.pubsub, audit: c.auditLog }))
  .add('audit', (c, m) => createAuditModule({ auditLog: c.auditLog, access: m.access.service }))
  .add('settings', (c, m) =>
    createSettingsModule({
      systemDb: c.base.systemDb,
      clock: c.clock,
      pubsub: c.pubsub,
      audit: m.audit.service,
      access: m.access.service,
    }),
  )
  .add('projects', (c, m) =>
    createProjectsModule({ registry: c.registry, clock: c.clock, audit: m.audit.service, access: m.access.service }),
  )
  .add('users', (c, m) =>
    createUsersModule({
      systemDb: c.base.systemDb,
      clock: c.clock,
      dbKind: c.registry.kind,
      access: m.access.service,
      audit: m.audit.service,
      passwordIterations: c.config.auth.passwordIterations,
      requireEmail: (projectId: string) => m.settings.service.get(projectId, 'auth.requireEmail'),
    }),
  )
  .add('apiKeys', (c, m) => {
    const pace = c.options.credentialLoadPace
    return createApiKeysModule({
      systemDb: c.base.systemDb,
      clock: c.clock,
      access: m.access.service,
      audit: m.audit.service,
      pubsub: c.pubsub,
      users: m.users.service,
      loadPace: pace && (() => pace('api_key')),
    })
  })
  .add('auth', (c, m) => {
    const { config } = c
    const pace = c.options.credentialLoadPace
    return createAuthModule({
      ...c.base,
      pubsub: c.pubsub,
      mailer: c.mailer,
      limiter: c.limiter,
      events: c.events,
      secretKey: config.secretKey,
      publicUrl: config.publicUrl,
      passwordIterations: config.auth.passwordIterations,
      users: m.users.service,
      userChanges: m.users.onChange,
      apiKeys: m.apiKeys.service,
      access: m.access.service,
      projects: m.projects.service,
      settings: m.settings.service,
      audit: m.audit.service,
      defaultProjectId: m.projects.defaultProject.id,
      trustedOrigins: config.corsOrigins,
      trustProxy: config.trustProxy,
      oauth: config.oauth,
      sessionTtlSeconds: config.auth.sessionTtlSeconds,
      rateLimitPerMinute: config.auth.rateLimitPerMinute,
      sessionLoadPace: pace && (() => pace('session')),
    })
  })
  .add('collections', async (c, m) => {
    const collections = await createCollectionsModule({
      ...c.base,
      registry: c.options.collectionDatabases?.(c.registry) ?? c.registry,
      access: m.access.service,
      pubsub: c.pubsub,
      audit: m.audit.service,
      events: c.events,
      // Alone (no Redis), the instance keeps one name, so a restart finds its r2_sql working copies (decision 036).
      r2Sql: {
        ...c.options.r2Sql,
        storage: c.storage,
        dataDir: c.config.dataDir,
        queue: c.queue,
        instanceId: c.queue.shared ? newId() : 'local',
      },
    })
    // Grants name fields of collections: built before collections, so registered here (decision 062).
    const grants = m.access.service.grantFieldReferences
    collections.fieldReferences.add((query, found) => grants.find(query, found))
    collections.fieldRenamed.add((query, to) => grants.rename(query, to))
    return collections
  })
  .add('databases', (c, m) =>
    createDatabasesModule({
      ...c.base,
      secretKey: c.config.secretKey,
      audit: m.audit.service,
      registry: c.registry,
      dataDir: c.config.dataDir,
      collections: m.collections.service,
      access: m.access.service,
    }),
  )
  .add('storageConnections', (c, m) =>
    createStorageConnectionsModule({
      ...c.base,
      secretKey: c.config.secretKey,
      audit: m.audit.service,
      access: m.access.service,
      allowPrivateNetwork: c.config.allowPrivateNetwork,
      outbound: c.outbound,
    }),
  )
  // File containers name storage connections (checked as the caller); files read their rules at upload.
  .add('containers', (c, m) =>
    createContainersModule({
      ...c.base,
      access: m.access.service,
      audit: m.audit.service,
      storageConnections: m.storageConnections.service,
      events: c.events,
    }),
  )
  // Before records: records ask files which file ids a writer may read; files ask which ids records still hold, a function of collections alone.
  .add('files', (c, m) =>
    createFilesModule({
      ...c.base,
      systemKind: c.registry.system.kind,
      storage: c.options.filesStorage?.(c.storage) ?? c.storage,
      access: m.access.service,
      settings: m.settings.service,
      events: c.events,
      collections: m.collections.service,
      removedCollections: m.collections.onRemoved,
      referencedFiles: createFileReferences(m.collections.service),
      containers: m.containers.service,
      storageConnections: m.storageConnections.service,
    }),
  )
  .add('records', (c, m) =>
    createRecordsModule({
      ...c.base,
      collections: m.collections.service,
      access: m.access.service,
      grantFilterChecks: m.access.grantFilterChecks,
      settings: m.settings.service,
      users: m.users.service,
      userDeletes: m.users.beforeDelete,
      audit: m.audit.service,
      events: c.events,
      writeVersions: c.writeVersions,
      readableFiles: (principal, ids) => m.files.service.readable(principal, ids),
      importPace: c.options.importPace,
    }),
  )
  .add('searchIndexes', (c, m) =>
    createSearchIndexesModule({
      ...c.base,
      access: m.access.service,
      audit: m.audit.service,
      records: m.records.service,
      storage: c.storage,
      dataDir: c.config.dataDir,
      searchIndexSeam: m.records.searchIndexes,
      removedCollections: m.collections.onRemoved,
      fieldReferences: m.collections.fieldReferences,
      fieldRenamed: m.collections.fieldRenamed,
    }),
  )
  // Lenses read through records as the caller; flows render them (render_lens_template), so before automate.
  .add('lenses', (c, m) => {
    // Lenses name fields in their definitions: a drop is refused, a rename reports them (decision 062).
    m.collections.fieldReferences.add(createLensFieldReferences(c.base.systemDb))
    return createLensesModule({
      ...c.base,
      access: m.access.service,
      audit: m.audit.service,
      records: m.records.service,
    })
  })
  // Renderers read one record through records as the caller; removed with their collection (decision 065).
  .add('renderers', (c, m) => {
    // Templates name fields: a drop is refused, a rename reports them (decision 062).
    m.collections.fieldReferences.add(createRendererFieldReferences(c.base.systemDb))
    return createRenderersModule({
      ...c.base,
      access: m.access.service,
      audit: m.audit.service,
      records: m.records.service,
      removedCollections: m.collections.onRemoved,
      events: c.events,
    })
  })
  // Which lens a collection offers; removed with their lens and with their collection (decision 065).
  .add('lensAttachments', (c, m) =>
    createLensAttachmentsModule({
      ...c.base,
      access: m.access.service,
      audit: m.audit.service,
      lenses: m.lenses.service,
      deletedLenses: m.lenses.onDeleted,
      collections: m.collections.service,
      removedCollections: m.collections.onRemoved,
      events: c.events,
    }),
  )
  // Saved views read through records as the caller and go with their collections (decision 063).
  .add('views', (c, m) => {
    // A view's definition names fields: a drop is refused, a rename reports it (decision 062).
    m.collections.fieldReferences.add(createViewFieldReferences(c.base.systemDb))
    return createViewsModule({
      ...c.base,
      access: m.access.service,
      audit: m.audit.service,
      records: m.records.service,
      removedCollections: m.collections.onRemoved,
      events: c.events,
    })
  })
  // The menu: its tree asks collections, access, lenses and views what each caller may read (decision 064).
  .add('navigation', (c, m) =>
    createNavigationModule({
      ...c.base,
      dbKind: c.registry.system.kind,
      access: m.access.service,
      audit: m.audit.service,
      readableCollections: async (actor) => (await m.collections.service.visibleTo(actor)).map((col) => col.name),
      lensExists: async (projectId, id) => (await m.lenses.service.store.byId(projectId, id)) !== undefined,
      viewCollection: (actor, id) => m.views.service.collectionOf(actor, id),
      events: c.events,
    }),
  )
  .add('operations', (c, m) => createOperationsModule({ access: m.access.service, clock: c.clock, log: c.log }))
  .add('structure', (c, m) =>
    createStructureModule({
      ...c.base,
      collections: m.collections.service,
      fieldChanges: m.collections.fieldChanges,
      records: m.records.service,
      access: m.access.service,
      settings: m.settings.service,
      pace: c.options.structureJobPace,
    }),
  )
  .add('email', (c, m) =>
    createEmailModule({
      ...c.base,
      mailer: c.mailer,
      access: m.access.service,
      receiptSecret: c.config.email.receiptSecret,
    }),
  )
  // Inboxes and each user's live channel (served as a stream by the realtime module, built later).
  .add('notifications', (c, m) =>
    createNotificationsModule({
      systemDb: c.base.systemDb,
      clock: c.clock,
      pubsub: c.pubsub,
      log: c.log,
      users: m.users.service,
      access: m.access.service,
    }),
  )
  .add('automate', (c, m) => {
    const { config, options } = c
    // Flows name fields in their steps: a drop is refused, a rename reports them (decision 062).
    m.collections.fieldReferences.add(createFlowFieldReferences(c.base.systemDb))
    const files = m.files.service
    return createAutomateModule({
      ...c.base,
      dbKind: c.registry.system.kind,
      pubsub: c.pubsub,
      access: m.access.service,
      audit: m.audit.service,
      publicUrl: config.publicUrl,
      operations: options.operations?.(m.operations.service) ?? m.operations.service,
      findUser: m.users.service.findRow,
      findApiKey: m.apiKeys.service.byId,
      findCollection: (projectId, name) => m.collections.service.find(projectId, name),
      limiter: c.limiter,
      slots: c.slots,
      queue: c.queue,
      services: {
        records: m.records.service,
        files,
        collections: m.collections.service,
        outbound: c.outbound,
        dataTools: m.records.dataTools,
        email: m.email.service,
        searchIndexes: m.searchIndexes.service,
        notifications: m.notifications.service,
        settings: m.settings.service,
        lenses: m.lenses.service,
        storageConnections: m.storageConnections.service,
      },
      projects: m.projects.service,
      projectCreated: m.projects.onCreated,
      events: c.events,
      hooks: m.records.service.hooks,
      trustProxy: config.trustProxy,
      runLeaseMs: config.runLeaseMs,
      outbound: c.outbound,
      usage: [m.email.service.usage],
      // The ai_* operations' service: providers from CF_* / OPENAI_* (their base URLs reached on any address: the operator's, decision 039), the daily token quota, images as files (docs/ai.md).
      quotaServices: (quotas) => {
        const { systemDb, clock } = c.base
        const ai = createAiService({ systemDb, clock, providers: createAiProviders(config.ai), files, quotas })
        return { services: { ai: ai.steps }, close: ai.close }
      },
    })
  })
  .add('webhooks', (c, m) =>
    createWebhooksModule({
      ...c.base,
      pubsub: c.pubsub,
      secretKey: c.config.secretKey,
      audit: m.audit.service,
      access: m.access.service,
      collections: m.collections.service,
      removedCollections: m.collections.onRemoved,
      allowPrivateNetwork: c.config.allowPrivateNetwork,
      queue: c.queue,
      events: c.events,
      outbound: c.outbound,
      delivery: c.options.webhookDelivery,
    }),
  )
  // The tool server (issue 18, decision 043): every tool and resource read as the key, through the services above.
  .add('mcp', async (c, m) =>
    createMcpModule({
      ...c.base,
      limiter: c.limiter,
      version: c.config.version,
      access: m.access.service,
      services: {
        records: m.records.service,
        collections: m.collections.service,
        access: m.access.service,
        flows: m.automate.service,
        email: m.email.service,
        settings: m.settings.service,
        // search_docs / get_doc_page: the project's own docs/ pages, indexed once per process (docs/mcp-docs-search.md).
        docs: c.options.mcpDocs ?? (await sharedDocsIndex()),
      },
    }),
  )
  .add('rolePreview', (_c, m) =>
    createRolePreviewModule({ access: m.access.service, users: m.users.service, records: m.records.service }),
  )
  .add('capabilityTokens', (c, m) =>
    createCapabilityTokensModule({
      secretKey: c.config.secretKey,
      clock: c.clock,
      open: m.records.service.open,
      users: m.users.service,
      access: m.access.service,
    }),
  )
  .add('realtime', (c, m) =>
    createRealtimeModule({
      ...c.options.realtime,
      events: c.events,
      pubsub: c.pubsub,
      open: m.records.service.open,
      clock: c.clock,
      log: c.log,
      authenticate: m.auth.security.authenticate,
      capabilities: m.capabilityTokens.service,
      inbox: m.notifications.live,
    }),
  )
  .add('system', (c, m) =>
    createSystemModule({
      version: c.config.version,
      database: c.config.database.kind,
      storage: c.config.storage.kind,
      cache: c.config.redisUrl ? 'redis' : 'memory',
      emailChannel: c.config.email.channel,
      emailReceipts: m.email.service.receipts,
    }),
  )
  .add('storageObjects', (c) => createStorageObjectsModule(c.storage))
  .add('adminUi', (c) =>
    createAdminUiModule({
      enabled: c.config.adminUi,
      publicUrl: c.config.publicUrl,
      storageOrigin:
        c.config.storage.kind === 's3' ? (c.config.storage.publicEndpoint ?? c.config.storage.endpoint) : null,
      log: c.log,
    }),
  )
  // Blueprints (issue 30): documents checked, planned and installed through one provider per brick kind over the services above.
  .add('blueprints', (c, m) =>
    createBlueprintsModule({
      access: m.access.service,
      systemDb: c.base.systemDb,
      clock: c.clock,
      log: c.log,
      queue: c.queue,
      providers: () =>
        brickProviders({
          access: m.access.service,
          collections: m.collections.service,
          records: m.records.service,
          lenses: m.lenses.service,
          webhooks: m.webhooks.service,
          searchIndexes: m.searchIndexes.service,
          scripts: m.automate.scripts,
          automate: m.automate.service,
          views: m.views.service,
          navigation: m.navigation.service,
          renderers: m.renderers.service,
          lensAttachments: m.lensAttachments.service,
          containers: m.containers.service,
        }),
    }),
  )

/** Every module of the list, by name, once built. */
export type AppModules = Awaited<ReturnType<typeof appModules.compose>>
