import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { EventBus } from '../../lib/events/index.js'
import type { DatabaseRegistry } from '../../lib/db/index.js'
import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import { createObservers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { JobQueue } from '../../lib/queue/index.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { FieldDef } from './field-types/index.js'
import type { CollectionEvents } from './events.js'
import type { FieldReference, FieldReferenceQuery } from './references.js'
import { createR2Sql } from './r2-sql/r2-sql.js'
import { collectionsRoutes } from './routes.js'
import { createCollectionsService, type Collection, type FieldChangeHooks } from './service.js'

export interface CollectionsModuleDeps {
  systemDb: Kysely<any>
  registry: DatabaseRegistry
  access: Pick<AccessService, 'decide' | 'reachesAny' | 'authorize'>
  clock: Clock
  pubsub: PubSub
  audit: AuditService
  log: Logger
  /** collection.update is published here (docs/events.md). */
  events: EventBus<CollectionEvents>
  /** r2_sql collections (decision 036): their files go to this object storage, their copies under dataDir. */
  r2Sql: {
    storage: ObjectStorage
    dataDir: string
    queue: JobQueue
    /** This instance; working copies live under it. */
    instanceId: string
    /** When the schedule publishes every held claim (cron, UTC); every minute by default. */
    publishPattern?: string
    /** A publish gives the writer claim up after this long without writes (30 s by default). */
    quietMs?: number
  }
}

/**
 * Collections: the registry and each collection's table. The modules built after it register here at
 * their own construction: `onRemoved` (files settle the files of removed collections), `fieldChanges`
 * (structure may refuse a field list change, and supersedes its jobs after one), and `fieldReferences` and
 * `fieldRenamed` (what names a field, for drops and renames).
 */
export async function createCollectionsModule(deps: CollectionsModuleDeps) {
  const { access } = deps
  const removed = createObservers<[actor: Principal, projectId: string, names: readonly string[]]>()
  const before = createObservers<[collection: Collection, next: readonly FieldDef[]]>()
  const after = createObservers<[collection: Collection, next: readonly FieldDef[]]>()
  const references = createObservers<[query: FieldReferenceQuery, found: FieldReference[]]>()
  const renamed = createObservers<[query: FieldReferenceQuery, to: string]>()
  const r2Sql = createR2Sql({
    ...deps.r2Sql,
    systemDb: deps.systemDb,
    clock: deps.clock,
    log: deps.log,
    pubsub: deps.pubsub,
  })
  await r2Sql.start()
  // The schedule fires on one instance; its job asks every instance to publish what it holds.
  const publishing = await deps.r2Sql.queue.define<{ 'publish-held': Record<string, never> }>('r2-sql', {
    handlers: { 'publish-held': () => r2Sql.publishEverywhere() },
  })
  await publishing.schedule('r2-sql-publish', {
    pattern: deps.r2Sql.publishPattern ?? '* * * * *',
    job: 'publish-held',
    data: {},
  })
  const service = await createCollectionsService({
    ...deps,
    r2Sql,
    canRead: async (principal, collection) => {
      if (collection.accessControl?.preset === 'public') return true
      if ((await access.decide(principal, 'schema/*', 'read')).allowed) return true
      return (await access.decide(principal, `collections/${collection.name}`, 'read')).allowed
    },
    canReadSome: async (principal) =>
      (await access.decide(principal, 'schema/*', 'read')).allowed ||
      (await access.reachesAny(principal, 'collections/*', 'read')),
    onRemoved: removed.notify,
    fieldChanges: { before: before.notify, after: after.notify },
    findFieldReferences: references.notify,
    onFieldRenamed: renamed.notify,
  })
  // Collections made before live-row indexes get them now, before any request is served (decision 024).
  await service.upgradeIndexes()
  return {
    service,
    onRemoved: { add: removed.add },
    /** What other modules keep that names a field: a drop is refused while any exists (decision 062). */
    fieldReferences: { add: references.add },
    /** Told after a field was renamed: other modules rewrite what they keep. */
    fieldRenamed: { add: renamed.add },
    fieldChanges: {
      /** Adds a pair of field change hooks; returns its removal. */
      add(hooks: FieldChangeHooks): () => void {
        const drops = [before.add((c, next) => hooks.before(c, next)), after.add((c, next) => hooks.after(c, next))]
        return () => drops.forEach((drop) => drop())
      },
    },
    routers: ({ security, readSecurity }) => collectionsRoutes(service, security, readSecurity),
    close: async () => {
      await r2Sql.close()
      await service.close()
    },
  } satisfies AppModule
}
