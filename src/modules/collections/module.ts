import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { DatabaseRegistry } from '../../lib/db/index.js'
import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import { createObservers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { FieldDef } from './field-types/index.js'
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
}

/**
 * Collections: the registry and each collection's table. The modules built after it register here at
 * their own construction: `onRemoved` (files settle the files of removed collections) and `fieldChanges`
 * (structure may refuse a field list change, and supersedes its jobs after one).
 */
export async function createCollectionsModule(deps: CollectionsModuleDeps) {
  const { access } = deps
  const removed = createObservers<[actor: Principal, projectId: string, names: readonly string[]]>()
  const before = createObservers<[collection: Collection, next: readonly FieldDef[]]>()
  const after = createObservers<[collection: Collection, next: readonly FieldDef[]]>()
  const service = await createCollectionsService({
    ...deps,
    canRead: async (principal, collection) => {
      if (collection.accessControl?.preset === 'public') return true
      if ((await access.decide(principal, 'schema/*', 'read')).allowed) return true
      return (await access.decide(principal, `collections/${collection.name}`, 'read')).allowed
    },
    canReadSome: async (principal) =>
      (await access.decide(principal, 'schema/*', 'read')).allowed || (await access.reachesAny(principal, 'collections/*', 'read')),
    onRemoved: removed.notify,
    fieldChanges: { before: before.notify, after: after.notify },
  })
  // Collections made before live-row indexes get them now, before any request is served (decision 024).
  await service.upgradeIndexes()
  return {
    service,
    onRemoved: { add: removed.add },
    fieldChanges: {
      /** Adds a pair of field change hooks; returns its removal. */
      add(hooks: FieldChangeHooks): () => void {
        const drops = [before.add((c, next) => hooks.before(c, next)), after.add((c, next) => hooks.after(c, next))]
        return () => drops.forEach((drop) => drop())
      },
    },
    routers: ({ security, readSecurity }) => collectionsRoutes(service, security, readSecurity),
    close: () => service.close(),
  } satisfies AppModule
}
