import type { Kysely } from 'kysely'
import { createProjectCache } from '../../../lib/cache/project-cache.js'
import type { Clock } from '../../../lib/clock.js'
import { refreshStatistics, type DatabaseRegistry, type DbHandle } from '../../../lib/db/index.js'
import { AppError, isAppError } from '../../../lib/errors.js'
import type { EventBus } from '../../../lib/events/index.js'
import type { Logger } from '../../../lib/log.js'
import type { Principal } from '../../../lib/principal.js'
import type { PubSub } from '../../../lib/pubsub/index.js'
import type { AccessService } from '../../access/index.js'
import type { AuditService } from '../../audit/index.js'
import { toCollection, type Collection, type FieldChangeHooks } from '../collection.js'
import type { CollectionEvents } from '../events.js'
import type { CompoundIndex } from '../definition/index.js'
import type { FieldDef } from '../field-types/index.js'
import type { R2Sql } from '../r2-sql/r2-sql.js'
import { createCollectionsStore } from '../store.js'
import type { FieldReferenceFinder, FieldRenameListener } from '../references.js'

export interface CollectionsDeps {
  systemDb: Kysely<any>
  registry: DatabaseRegistry
  clock: Clock
  pubsub: PubSub
  audit: AuditService
  log: Logger
  /**
   * Whether a caller may see a collection's schema (a read grant on it, its public preset, or schema read);
   * for a name no collection has (`accessControl: null`), whether its grants would let it.
   */
  canRead: (principal: Principal, collection: Pick<Collection, 'name' | 'accessControl'>) => Promise<boolean>
  /** Whether a caller's grants let it see some collection's schema at all (read on any collection, or schema read). */
  canReadSome: (principal: Principal) => Promise<boolean>
  /** The access module's check, which creating, changing and deleting collections go through (`schema/*:…`). */
  access: Pick<AccessService, 'authorize'>
  /** The files of r2_sql collections: working copies, published versions, the writer claim (decision 036). */
  r2Sql: R2Sql
  fieldChanges?: FieldChangeHooks
  /** Other modules' references to a field (grants, search indexes, lenses, flows): a drop is refused while one exists. */
  findFieldReferences?: FieldReferenceFinder
  /** Told after a field was renamed: other modules rewrite their updatable references. A failure is logged. */
  onFieldRenamed?: FieldRenameListener
  /** Where `collection.update` is published once a change committed (docs/events.md). */
  events?: EventBus<CollectionEvents>
  /** Told after collections are removed, with who removed them (their files are settled); a failure is logged, not thrown. */
  onRemoved?: (actor: Principal, projectId: string, names: readonly string[]) => Promise<void>
}

const channel = 'collections.changed'

/**
 * What every use case of the collections service shares: its dependencies, the registry store, the
 * per-project cache of the registry, and the helpers that reach a collection's database.
 */
export type CollectionsContext = Awaited<ReturnType<typeof createCollectionsContext>>

/** Builds the context; the registry is cached per project and dropped everywhere on change. */
export async function createCollectionsContext(deps: CollectionsDeps) {
  const store = createCollectionsStore(deps.systemDb)
  const cache = await createProjectCache({
    pubsub: deps.pubsub,
    channel,
    load: async (projectId) => new Map((await store.list(projectId)).map((r) => [r.name, toCollection(r)])),
  })

  function changed(projectId: string): Promise<void> {
    return cache.invalidate(projectId)
  }

  /** What hangs off removed collections elsewhere (their files) goes after them; the removal stands regardless. */
  async function removed(actor: Principal, projectId: string, names: readonly string[]): Promise<void> {
    if (names.length === 0 || !deps.onRemoved) return
    await deps
      .onRemoved(actor, projectId, names)
      .catch((err: unknown) =>
        deps.log.warn({ err, projectId, collections: names }, 'cleaning up after removed collections failed'),
      )
  }

  function load(projectId: string): Promise<Map<string, Collection>> {
    return cache.get(projectId)
  }

  async function require(projectId: string, name: string): Promise<Collection> {
    const collection = (await load(projectId)).get(name)
    if (!collection) throw new AppError('collection_not_found', `Collection "${String(name).slice(0, 60)}" not found`)
    return collection
  }

  async function others(projectId: string, except: string): Promise<Map<string, readonly FieldDef[]>> {
    const all = await load(projectId)
    return new Map([...all.values()].filter((c) => c.name !== except).map((c) => [c.name, c.fields]))
  }

  /**
   * The handle of the database a collection's table lives in. For r2_sql (decision 036) it depends on the
   * intent: a write claims the collection's working copy here; a read gets that copy while this instance
   * holds the claim, else the last published file (read-only).
   */
  function handleOf(
    collection: Pick<Collection, 'projectId' | 'databaseId' | 'storageType' | 'id'>,
    intent: 'read' | 'write' = 'read',
  ): Promise<DbHandle> {
    if (collection.storageType === 'r2_sql') return deps.r2Sql.handle(collection, intent)
    return deps.registry.get(collection.projectId, collection.databaseId)
  }

  /**
   * DDL failures are the database's refusal, reported as ddl_error with its message (never a value); a
   * unique index the existing rows break is 409 already_exists.
   */
  async function ddl<T>(run: () => Promise<T>, uniqueAdded: readonly CompoundIndex[] = []): Promise<T> {
    try {
      return await run()
    } catch (err) {
      // What the rows refuse (a schema change checked against them) is the caller's answer as it is.
      if (isAppError(err) && err.code === 'conflict') throw err
      // A broken unique constraint names its columns; the database's other refusals (an object that exists) do not.
      const columns = isAppError(err) && err.code === 'already_exists' ? err.details.fields : undefined
      if (uniqueAdded.length > 0 && Array.isArray(columns) && columns.length > 0) {
        const which = uniqueAdded.map((i) => `(${i.fields.map((f) => f.replace(/^-/, '')).join(', ')})`).join(' or ')
        throw new AppError(
          'already_exists',
          `Existing records share values of ${which}: the unique index cannot be made; nothing was changed`,
          { fields: columns },
        )
      }
      deps.log.error({ err }, 'collection DDL failed')
      const reason =
        isAppError(err) && err.cause instanceof Error
          ? err.cause.message
          : err instanceof Error
            ? err.message
            : 'unknown'
      throw new AppError('ddl_error', 'The schema change failed in the database; nothing was changed', {
        reason: reason.slice(0, 300),
      })
    }
  }

  /** Planner statistics after an index change; advice only, so a failure is logged, not thrown. */
  async function refreshed(handle: DbHandle, table: string): Promise<void> {
    await refreshStatistics(handle, table).catch((err: unknown) =>
      deps.log.warn({ err, table }, 'refreshing planner statistics failed'),
    )
  }

  return { deps, store, cache, changed, removed, load, require, others, handleOf, ddl, refreshed }
}
