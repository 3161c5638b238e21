import { describeTable } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import { layoutOf, toCollection, type Collection, type ColumnStatus } from './collection.js'
import { currentIndexLayout, rebuildCollectionIndexes } from './ddl.js'
import { documentColumn } from './document-table.js'
import { systemColumns } from './definition/index.js'
import { fieldTypeOf } from './field-types/index.js'
import type { PublishResult } from './r2-sql/r2-sql.js'
import { createCollectionsContext, type CollectionsDeps } from './service/context.js'
import { createCollection } from './service/create.js'
import { deleteCollection, forgetCollections } from './service/remove.js'
import { previewChanges } from './service/preview.js'
import { updateCollection } from './service/update.js'

export {
  layoutOf,
  storageTypes,
  type Collection,
  type ColumnStatus,
  type FieldChangeHooks,
  type StorageType,
} from './collection.js'
export type { CollectionsDeps } from './service/context.js'

const signIn = () => new AppError('unauthorized', 'Sign in to do this')

/**
 * Collections: the registry (system database) and each collection's table in its project's database or
 * a registered binding. The reads are here; creating, changing and removing are one file each under
 * service/, over the context they share (service/context.ts).
 */
export async function createCollectionsService(deps: CollectionsDeps) {
  const ctx = await createCollectionsContext(deps)

  return {
    /**
     * Brings every collection below the current index layout to it (decision 024): its indexes rebuilt in
     * its database, then the layout recorded. Run at start; a collection whose database cannot be reached
     * or refuses is logged and left for the next start (its lists still work, only slower).
     */
    async upgradeIndexes(): Promise<void> {
      for (const row of await ctx.store.listBelowLayout(currentIndexLayout)) {
        const collection = toCollection(row)
        try {
          const handle = await ctx.handleOf(collection)
          await rebuildCollectionIndexes(
            handle,
            collection.name,
            collection.fields,
            collection.indexes,
            layoutOf(collection),
          )
          await ctx.store.update(collection.id, { index_layout: currentIndexLayout })
          await ctx.refreshed(handle, collection.name)
          ctx.deps.log.info(
            { projectId: collection.projectId, collection: collection.name },
            'collection indexes rebuilt for live rows',
          )
        } catch (err) {
          ctx.deps.log.warn(
            { err, projectId: collection.projectId, collection: collection.name },
            'rebuilding collection indexes failed; trying again at the next start',
          )
        }
      }
    },

    /** Every collection of the project, by name. */
    async list(projectId: string): Promise<Collection[]> {
      return [...(await ctx.load(projectId)).values()]
    },

    /** One collection. Throws collection_not_found. */
    get: ctx.require,

    /**
     * The collections of its project a caller may see (collections/<name>:read, the public preset, or
     * schema read): the others are left out, never refused. Throws unauthorized for an anonymous caller that no grant of
     * `public` and no public collection opens anything to (decision 012): a credential is missing, not data.
     */
    async visibleTo(principal: Principal): Promise<Collection[]> {
      const all = [...(await ctx.load(principal.projectId)).values()]
      const seen = await Promise.all(all.map((c) => ctx.deps.canRead(principal, c)))
      const visible = all.filter((_, i) => seen[i])
      if (visible.length === 0 && principal.kind === 'anonymous' && !(await ctx.deps.canReadSome(principal)))
        throw signIn()
      return visible
    },

    /**
     * One collection the caller may see; one it may not is as missing (collection_not_found), except to an
     * anonymous caller, who is asked to sign in (unauthorized) unless its grants would let it see that name.
     */
    async visible(principal: Principal, name: string): Promise<Collection> {
      const collection = (await ctx.load(principal.projectId)).get(name)
      if (collection && (await ctx.deps.canRead(principal, collection))) return collection
      if (
        principal.kind === 'anonymous' &&
        (collection || !(await ctx.deps.canRead(principal, { name, accessControl: null })))
      )
        throw signIn()
      throw new AppError('collection_not_found', `Collection "${String(name).slice(0, 60)}" not found`)
    },

    /** One collection, or null. */
    async find(projectId: string, name: string): Promise<Collection | null> {
      return (await ctx.load(projectId)).get(name) ?? null
    },

    /** The database handle a collection's table lives in. */
    handleOf: ctx.handleOf,

    /**
     * Publishes an r2_sql collection's unpublished writes to object storage (wherever they are held); the
     * caller decided who may. Throws invalid_request for another storage type, conflict, service_unavailable.
     */
    async publishFile(collection: Collection): Promise<PublishResult> {
      if (collection.storageType !== 'r2_sql') {
        throw new AppError(
          'invalid_request',
          `Only r2_sql collections are published; ${collection.name} is ${collection.storageType}`,
          { storageType: collection.storageType },
        )
      }
      return ctx.deps.r2Sql.publish(collection)
    },

    /** The columns the table has now, for each system column and stored field. */
    async columnStatuses(collection: Collection): Promise<ColumnStatus[]> {
      const handle = await ctx.handleOf(collection)
      const actual = new Map((await describeTable(handle, collection.name)).map((c) => [c.name, c.type]))
      const stored = collection.fields
        .filter((f) => fieldTypeOf(f.type).column(f, handle.kind) !== null)
        .map((f) => f.name)
      const system = systemColumns.map((c) => ({
        name: c.name,
        exists: actual.has(c.name),
        type: actual.get(c.name) ?? '',
      }))
      // A kv field is a key of the document column: it exists as long as that column does (decision 035).
      if (layoutOf(collection) === 'document') {
        const doc = actual.get(documentColumn)
        return [
          ...system,
          ...stored.map((name) => ({
            name,
            exists: doc !== undefined,
            type: doc === undefined ? '' : `${documentColumn}.${name}`,
          })),
        ]
      }
      return [...system, ...stored.map((name) => ({ name, exists: actual.has(name), type: actual.get(name) ?? '' }))]
    },

    /** Creates a collection and its table (service/create.ts). */
    create: (actor: Principal, input: Parameters<typeof createCollection>[2]) => createCollection(ctx, actor, input),

    /** Replaces the field list, compound indexes and access control (service/update.ts). */
    update: (actor: Principal, name: string, input: Parameters<typeof updateCollection>[3]) =>
      updateCollection(ctx, actor, name, input),

    /** What an update with the same input would do, written nowhere (service/preview.ts). */
    preview: (actor: Principal, name: string, input: Parameters<typeof previewChanges>[3]) =>
      previewChanges(ctx, actor, name, input),

    /** Drops the table and all its data, then the registry entry (service/remove.ts). */
    delete: (actor: Principal, name: string) => deleteCollection(ctx, actor, name),

    /** Removes collections from the registry, keeping their tables (service/remove.ts). */
    forget: (actor: Principal, projectId: string, names: readonly string[]) =>
      forgetCollections(ctx, actor, projectId, names),

    /** Records that a collection used owner scoping (a transfer): owned_by shows from then on. */
    async markOwnerScoped(collection: Collection): Promise<void> {
      if (collection.ownerScoped) return
      await ctx.store.update(collection.id, { owner_scoped: true })
      await ctx.changed(collection.projectId)
    },

    async close(): Promise<void> {
      await ctx.cache.close()
    },
  }
}

export type CollectionsService = Awaited<ReturnType<typeof createCollectionsService>>
