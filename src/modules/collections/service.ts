import type { Kysely } from 'kysely'
import { createProjectCache } from '../../lib/cache/project-cache.js'
import type { Clock } from '../../lib/clock.js'
import { describeTable, isOwnDatabaseId, MAIN_BINDING, ownDatabaseId, refreshStatistics, type DatabaseRegistry, type DbHandle } from '../../lib/db/index.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { alterCollectionTable, changesIndexes, createCollectionTable, currentIndexLayout, dropCollectionTable, rebuildCollectionIndexes, type TableChange, type TableLayout } from './ddl.js'
import { documentColumn, isDocumentStorage } from './document-table.js'
import { AccessControlSchema, checkCollectionName, diffFields, normaliseFields, normaliseIndexes, systemColumns, type AccessControl, type CompoundIndex } from './definition/index.js'
import { fieldTypeOf, type FieldDef } from './field-types/index.js'
import type { PublishResult, R2Sql } from './r2-sql/r2-sql.js'
import { createCollectionsStore, type CollectionRow } from './store.js'

export const storageTypes = ['d1', 'r2_sql', 'kv', 'remote', 'durable_object'] as const
export type StorageType = (typeof storageTypes)[number]
// The storage types built so far; the rest are refused with a clear error rather than silently mapped.
const availableStorage: ReadonlySet<StorageType> = new Set(['d1', 'remote', 'durable_object', 'kv', 'r2_sql'])

/** How a collection's table keeps its fields: `kv` in one JSON document (document-table.ts), the others a column each. */
export function layoutOf(collection: Pick<Collection, 'storageType'>): TableLayout {
  return isDocumentStorage(collection.storageType) ? 'document' : 'columns'
}

/** A collection as the rest of Plinth sees it. */
export interface Collection {
  readonly id: string
  readonly projectId: string
  readonly name: string
  readonly storageType: StorageType
  readonly databaseId: string
  readonly schemaVersion: number
  readonly fields: readonly FieldDef[]
  /** Compound indexes it declares (beyond the spec, decision 024). */
  readonly indexes: readonly CompoundIndex[]
  readonly accessControl: AccessControl
  /** owned_by appears in responses once the collection used owner scoping or had a record transferred. */
  readonly ownerScoped: boolean
  readonly createdAt: number
  readonly updatedAt: number
}

export interface ColumnStatus {
  name: string
  exists: boolean
  type: string
}

const channel = 'collections.changed'

/**
 * Told about a PATCH of a collection's field list: `before` runs first and may refuse it (nothing is
 * written then), `after` once it is stored. The structure module uses them for addendum §4 (strict needs
 * a clean scan; running scans of a changed structure are superseded).
 */
export interface FieldChangeHooks {
  before(collection: Collection, next: readonly FieldDef[]): Promise<void>
  after(collection: Collection, next: readonly FieldDef[]): Promise<void>
}

const signIn = () => new AppError('unauthorized', 'Sign in to do this')

/**
 * Collections: the registry (system database) and each collection's table in its project's database or
 * a registered binding. The registry is cached per project and dropped everywhere on change.
 */
export async function createCollectionsService(deps: {
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
  /** Told after collections are removed, with who removed them (their files are settled); a failure is logged, not thrown. */
  onRemoved?: (actor: Principal, projectId: string, names: readonly string[]) => Promise<void>
}) {
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
    await deps.onRemoved(actor, projectId, names).catch((err: unknown) => deps.log.warn({ err, projectId, collections: names }, 'cleaning up after removed collections failed'))
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
  function handleOf(collection: Pick<Collection, 'projectId' | 'databaseId' | 'storageType' | 'id'>, intent: 'read' | 'write' = 'read'): Promise<DbHandle> {
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
      // A broken unique constraint names its columns; the database's other refusals (an object that exists) do not.
      const columns = isAppError(err) && err.code === 'already_exists' ? err.details.fields : undefined
      if (uniqueAdded.length > 0 && Array.isArray(columns) && columns.length > 0) {
        const which = uniqueAdded.map((i) => `(${i.fields.map((f) => f.replace(/^-/, '')).join(', ')})`).join(' or ')
        throw new AppError('already_exists', `Existing records share values of ${which}: the unique index cannot be made; nothing was changed`, { fields: columns })
      }
      deps.log.error({ err }, 'collection DDL failed')
      const reason = isAppError(err) && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : 'unknown'
      throw new AppError('ddl_error', 'The schema change failed in the database; nothing was changed', { reason: reason.slice(0, 300) })
    }
  }

  /** Planner statistics after an index change; advice only, so a failure is logged, not thrown. */
  async function refreshed(handle: DbHandle, table: string): Promise<void> {
    await refreshStatistics(handle, table).catch((err: unknown) => deps.log.warn({ err, table }, 'refreshing planner statistics failed'))
  }

  return {
    /**
     * Brings every collection below the current index layout to it (decision 024): its indexes rebuilt in
     * its database, then the layout recorded. Run at start; a collection whose database cannot be reached
     * or refuses is logged and left for the next start (its lists still work, only slower).
     */
    async upgradeIndexes(): Promise<void> {
      for (const row of await store.listBelowLayout(currentIndexLayout)) {
        const collection = toCollection(row)
        try {
          const handle = await handleOf(collection)
          await rebuildCollectionIndexes(handle, collection.name, collection.fields, collection.indexes, layoutOf(collection))
          await store.update(collection.id, { index_layout: currentIndexLayout })
          await refreshed(handle, collection.name)
          deps.log.info({ projectId: collection.projectId, collection: collection.name }, 'collection indexes rebuilt for live rows')
        } catch (err) {
          deps.log.warn({ err, projectId: collection.projectId, collection: collection.name }, 'rebuilding collection indexes failed; trying again at the next start')
        }
      }
    },

    /** Every collection of the project, by name. */
    async list(projectId: string): Promise<Collection[]> {
      return [...(await load(projectId)).values()]
    },

    /** One collection. Throws collection_not_found. */
    get: require,

    /**
     * The collections of its project a caller may see (collections/<name>:read, the public preset, or
     * schema read): the others are left out, never refused. Throws unauthorized for an anonymous caller that no grant of
     * `public` and no public collection opens anything to (decision 012): a credential is missing, not data.
     */
    async visibleTo(principal: Principal): Promise<Collection[]> {
      const all = [...(await load(principal.projectId)).values()]
      const seen = await Promise.all(all.map((c) => deps.canRead(principal, c)))
      const visible = all.filter((_, i) => seen[i])
      if (visible.length === 0 && principal.kind === 'anonymous' && !(await deps.canReadSome(principal))) throw signIn()
      return visible
    },

    /**
     * One collection the caller may see; one it may not is as missing (collection_not_found), except to an
     * anonymous caller, who is asked to sign in (unauthorized) unless its grants would let it see that name.
     */
    async visible(principal: Principal, name: string): Promise<Collection> {
      const collection = (await load(principal.projectId)).get(name)
      if (collection && (await deps.canRead(principal, collection))) return collection
      if (principal.kind === 'anonymous' && (collection || !(await deps.canRead(principal, { name, accessControl: null })))) throw signIn()
      throw new AppError('collection_not_found', `Collection "${String(name).slice(0, 60)}" not found`)
    },

    /** One collection, or null. */
    async find(projectId: string, name: string): Promise<Collection | null> {
      return (await load(projectId)).get(name) ?? null
    },

    /** The database handle a collection's table lives in. */
    handleOf,

    /**
     * Publishes an r2_sql collection's unpublished writes to object storage (wherever they are held); the
     * caller decided who may. Throws invalid_request for another storage type, conflict, service_unavailable.
     */
    async publishFile(collection: Collection): Promise<PublishResult> {
      if (collection.storageType !== 'r2_sql') {
        throw new AppError('invalid_request', `Only r2_sql collections are published; ${collection.name} is ${collection.storageType}`, { storageType: collection.storageType })
      }
      return deps.r2Sql.publish(collection)
    },

    /** The columns the table has now, for each system column and stored field. */
    async columnStatuses(collection: Collection): Promise<ColumnStatus[]> {
      const handle = await handleOf(collection)
      const actual = new Map((await describeTable(handle, collection.name)).map((c) => [c.name, c.type]))
      const stored = collection.fields.filter((f) => fieldTypeOf(f.type).column(f, handle.kind) !== null).map((f) => f.name)
      const system = systemColumns.map((c) => ({ name: c.name, exists: actual.has(c.name), type: actual.get(c.name) ?? '' }))
      // A kv field is a key of the document column: it exists as long as that column does (decision 035).
      if (layoutOf(collection) === 'document') {
        const doc = actual.get(documentColumn)
        return [...system, ...stored.map((name) => ({ name, exists: doc !== undefined, type: doc === undefined ? '' : `${documentColumn}.${name}` }))]
      }
      return [...system, ...stored.map((name) => ({ name, exists: actual.has(name), type: actual.get(name) ?? '' }))]
    },

    /**
     * Creates a collection and its table. Throws invalid_name, reserved_name, reserved_field,
     * duplicate_field, invalid_field, invalid_request (storage), not_found (database), already_exists,
     * ddl_error. On a DDL failure the registry entry is removed again: nothing half-made remains.
     */
    async create(
      actor: Principal,
      input: { name: unknown; storageType?: string; databaseId?: string | null; fields: unknown; indexes?: unknown; accessControl?: unknown },
    ): Promise<Collection> {
      await deps.access.authorize(actor, 'schema/*:create')
      const projectId = actor.projectId
      const name = checkCollectionName(input.name)
      const storageType = (input.storageType ?? 'd1') as StorageType
      if (!(storageTypes as readonly string[]).includes(storageType)) {
        throw new AppError('invalid_request', `storageType must be one of ${storageTypes.join(', ')}`)
      }
      if (!availableStorage.has(storageType)) {
        throw new AppError('invalid_request', `storageType "${storageType}" is not available on this instance yet; use ${[...availableStorage].join(', ')}`, { storageType })
      }
      const id = newId()
      const databaseId = databaseFor(storageType, input.databaseId, id)
      const accessControl = parseAccessControl(input.accessControl)
      const fields = normaliseFields(input.fields, { collection: name, collections: await others(projectId, name) })
      const indexes = normaliseIndexes(input.indexes, name, fields)
      // A registered binding must exist before anything is written (404 otherwise); a collection's own
      // database is made only once its name is taken, below.
      const own = storageType === 'durable_object'
      const file = storageType === 'r2_sql'
      const bound = own || file ? null : await deps.registry.get(projectId, databaseId)
      const now = deps.clock.seconds()
      const row: CollectionRow = {
        id,
        project_id: projectId,
        name,
        storage_type: storageType,
        database_id: databaseId,
        schema_version: 1,
        fields: JSON.stringify(fields),
        indexes: indexes.length > 0 ? JSON.stringify(indexes) : null,
        index_layout: currentIndexLayout,
        access_control: accessControl ? JSON.stringify(accessControl) : null,
        owner_scoped: accessControl?.preset === 'private',
        created_at: now,
        updated_at: now,
      }
      try {
        await store.insert(row)
      } catch (err) {
        if (isAppError(err) && err.code === 'already_exists') throw new AppError('already_exists', `A collection named "${name}" already exists`, { name })
        throw err
      }
      try {
        const layout = layoutOf({ storageType })
        if (file) await ddl(() => deps.r2Sql.create({ projectId, id }, (handle) => createCollectionTable(handle, name, fields, indexes, layout)))
        else await ddl(async () => createCollectionTable(bound ?? (await deps.registry.createOwn(projectId, databaseId)), name, fields, indexes, layout))
      } catch (err) {
        // Nothing half-made remains: the registration goes, and so does a database made for it.
        if (own) await deps.registry.dropOwn(projectId, databaseId).catch((e: unknown) => deps.log.error({ err: e, projectId, databaseId }, 'removing a failed collection database failed'))
        if (file) await deps.r2Sql.drop({ projectId, id }).catch((e: unknown) => deps.log.error({ err: e, projectId, collectionId: id }, 'removing a failed r2_sql collection failed'))
        await store.delete(row.id)
        throw err
      }
      await changed(projectId)
      await deps.audit.record({ projectId, action: 'collection.created', actor, target: { type: 'collection', id: row.id }, details: { name, fields: fields.length, indexes: indexes.length } })
      return toCollection(row)
    },

    /**
     * Replaces the field list (only additions, index toggles and json structures) and optionally the
     * compound indexes (the complete list: those left out are dropped, new ones made) and the access control. `name`, `storageType` and `databaseId` may come along (a client sending back what it read)
     * only with their current values: renaming or moving a collection is not supported. schemaVersion goes
     * up by one. Throws collection_not_found, invalid_field, invalid_request, already_exists (a new unique
     * index the rows break), ddl_error, and whatever the field-change hook refuses with (conflict).
     */
    async update(
      actor: Principal,
      name: string,
      input: { fields: unknown; indexes?: unknown; accessControl?: unknown; name?: string; storageType?: string; databaseId?: string },
    ): Promise<Collection> {
      await deps.access.authorize(actor, 'schema/*:update')
      const projectId = actor.projectId
      const collection = await require(projectId, name)
      for (const key of ['name', 'storageType', 'databaseId'] as const) {
        const sent = input[key]
        if (sent === undefined || sent === collection[key]) continue
        throw new AppError('invalid_request', `${key} is "${collection[key]}": renaming or moving a collection is not supported`, {
          property: key,
          current: collection[key],
        })
      }
      const fields = normaliseFields(input.fields, { collection: name, collections: await others(projectId, name) })
      const fieldChange = diffFields(collection.fields, fields)
      const indexes = input.indexes === undefined ? collection.indexes : normaliseIndexes(input.indexes, name, fields)
      const before = new Set(collection.indexes.map((i) => i.name))
      const after = new Set(indexes.map((i) => i.name))
      const change: TableChange = {
        ...fieldChange,
        indexesDropped: collection.indexes.filter((i) => !after.has(i.name)),
        indexesAdded: indexes.filter((i) => !before.has(i.name)),
      }
      const accessControl = input.accessControl === undefined ? collection.accessControl : parseAccessControl(input.accessControl)
      await deps.fieldChanges?.before(collection, fields)
      const handle = await handleOf(collection, 'write')
      await ddl(() => alterCollectionTable(handle, name, collection.fields, fields, change, layoutOf(collection)), change.indexesAdded.filter((i) => i.unique))
      if (changesIndexes(change)) await refreshed(handle, name)
      // Every instance reads the new columns from the published file: it is published before the answer.
      if (collection.storageType === 'r2_sql') await deps.r2Sql.publish(collection)
      const now = deps.clock.seconds()
      await store.update(collection.id, {
        fields: JSON.stringify(fields),
        indexes: indexes.length > 0 ? JSON.stringify(indexes) : null,
        access_control: accessControl ? JSON.stringify(accessControl) : null,
        schema_version: collection.schemaVersion + 1,
        owner_scoped: collection.ownerScoped || accessControl?.preset === 'private',
        updated_at: now,
      })
      await changed(projectId)
      await deps.fieldChanges?.after(collection, fields)
      await deps.audit.record({
        projectId,
        action: 'collection.updated',
        actor,
        target: { type: 'collection', id: collection.id },
        details: {
          name,
          added: change.added.map((f) => f.name),
          indexToggled: change.indexToggled.map((f) => f.name),
          indexesAdded: change.indexesAdded.map((i) => i.name),
          indexesDropped: change.indexesDropped.map((i) => i.name),
        },
      })
      return {
        ...collection,
        fields,
        indexes,
        accessControl,
        schemaVersion: collection.schemaVersion + 1,
        ownerScoped: collection.ownerScoped || accessControl?.preset === 'private',
        updatedAt: now,
      }
    },

    /** Drops the table and all its data, then the registry entry. Throws collection_not_found, conflict (referenced), ddl_error. */
    async delete(actor: Principal, name: string): Promise<void> {
      await deps.access.authorize(actor, 'schema/*:delete')
      const projectId = actor.projectId
      const collection = await require(projectId, name)
      // A relation pointing here would be left dangling and its collection could not be patched again.
      const referencing = [...(await load(projectId)).values()].flatMap((c) =>
        c.name === name ? [] : c.fields.filter((f) => f.relationConfig?.targetCollection === name).map((f) => `${c.name}.${f.name}`),
      )
      if (referencing.length > 0) {
        throw new AppError('conflict', `Relations still point at ${name}: ${referencing.join(', ')}; remove those collections first`, { referencing })
      }
      // A collection's own database goes whole (file or schema); elsewhere only its table is dropped.
      if (collection.storageType === 'durable_object') await ddl(() => deps.registry.dropOwn(projectId, collection.databaseId))
      else if (collection.storageType === 'r2_sql') await ddl(() => deps.r2Sql.drop(collection))
      else await ddl(async () => dropCollectionTable(await handleOf(collection), name, layoutOf(collection)))
      await store.delete(collection.id)
      await changed(projectId)
      await deps.audit.record({ projectId, action: 'collection.deleted', actor, target: { type: 'collection', id: collection.id }, details: { name } })
      await removed(actor, projectId, [name])
    },

    /**
     * Removes collections from the registry without touching their tables, because their database binding
     * is going away (DELETE /databases/:id with cascade). The shares of their records go with them (a
     * foreign key). Refused, before anything is removed, while a collection outside the set has a relation
     * to one inside. Throws conflict.
     */
    async forget(actor: Principal, projectId: string, names: readonly string[]): Promise<void> {
      const all = await load(projectId)
      const leaving = new Set(names)
      const referencing = [...all.values()].flatMap((c) =>
        leaving.has(c.name) ? [] : c.fields.filter((f) => f.relationConfig && leaving.has(f.relationConfig.targetCollection)).map((f) => `${c.name}.${f.name}`),
      )
      if (referencing.length > 0) {
        throw new AppError('conflict', `Relations still point at these collections: ${referencing.join(', ')}; remove those collections first`, { referencing })
      }
      const gone = names.map((name) => all.get(name)).filter((c): c is Collection => c !== undefined)
      for (const collection of gone) await store.delete(collection.id)
      await changed(projectId)
      for (const collection of gone) {
        await deps.audit.record({
          projectId,
          action: 'collection.deleted',
          actor,
          target: { type: 'collection', id: collection.id },
          details: { name: collection.name, databaseId: collection.databaseId, tableKept: true },
        })
      }
      await removed(actor, projectId, gone.map((c) => c.name))
    },

    /** Records that a collection used owner scoping (a transfer): owned_by shows from then on. */
    async markOwnerScoped(collection: Collection): Promise<void> {
      if (collection.ownerScoped) return
      await store.update(collection.id, { owner_scoped: true })
      await changed(collection.projectId)
    },

    async close(): Promise<void> {
      await cache.close()
    },
  }
}

export type CollectionsService = Awaited<ReturnType<typeof createCollectionsService>>

/**
 * The database a new collection lives in: the project's own (d1, kv), a registered binding (remote), or one
 * made for it alone (durable_object, named after its id). Throws invalid_request, not_found.
 */
function databaseFor(storageType: StorageType, requested: string | null | undefined, collectionId: string): string {
  // A kv collection is a table of the project's database like d1's; only its fields are kept otherwise (decision 035).
  if (storageType === 'kv') {
    if (requested && requested !== MAIN_BINDING) throw new AppError('invalid_request', 'A kv collection lives in the project database; databaseId cannot be chosen', { databaseId: requested })
    return MAIN_BINDING
  }
  if (storageType === 'durable_object' || storageType === 'r2_sql') {
    if (requested) throw new AppError('invalid_request', `A ${storageType} collection gets a database of its own; databaseId cannot be chosen`, { databaseId: requested })
    return ownDatabaseId(collectionId)
  }
  if (storageType === 'd1') {
    if (requested && requested !== MAIN_BINDING) throw new AppError('invalid_request', 'A d1 collection lives in the project database; use storageType remote for another one')
    return MAIN_BINDING
  }
  if (!requested) throw new AppError('invalid_request', 'A remote collection needs databaseId (a registered database)')
  // The project's own database is d1's, whatever it is called: labelled remote it would lie about where the data is.
  if (requested === MAIN_BINDING) {
    throw new AppError('invalid_request', `A remote collection lives in a registered database; "${MAIN_BINDING}" is the project's own (storageType d1)`, { databaseId: requested })
  }
  // Another collection's own database is not a binding: as unknown as any id that is not registered.
  if (isOwnDatabaseId(requested)) throw new AppError('not_found', 'Database binding not found', { databaseId: requested })
  return requested
}

function parseAccessControl(input: unknown): AccessControl {
  if (input === undefined) return null
  const parsed = AccessControlSchema.safeParse(input)
  if (!parsed.success) {
    throw new AppError('invalid_request', 'accessControl must be null or { preset: "private" | "team" | "public", sharing?: boolean }')
  }
  return parsed.data
}

function toCollection(row: CollectionRow): Collection {
  return Object.freeze({
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    storageType: row.storage_type as StorageType,
    databaseId: row.database_id,
    schemaVersion: row.schema_version,
    fields: Object.freeze(JSON.parse(row.fields) as FieldDef[]),
    indexes: Object.freeze(row.indexes ? (JSON.parse(row.indexes) as CompoundIndex[]) : []),
    accessControl: row.access_control ? (JSON.parse(row.access_control) as AccessControl) : null,
    ownerScoped: Boolean(row.owner_scoped),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  })
}
