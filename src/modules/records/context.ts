import type { Clock } from '../../lib/clock.js'
import type { DbHandle, StatisticsPacer } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import type { EventBus } from '../../lib/events/index.js'
import type { FieldResolver } from '../../lib/filter/index.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import { layoutOf, type Collection, type CollectionsService } from '../collections/index.js'
import type { SettingsService } from '../settings/index.js'
import type { RecordAccess } from './access.js'
import { fieldResolver, shapeOf, type CollectionShape } from './codec.js'
import type { RecordEvents, WriteHooks } from './events.js'
import type { Freshness } from './freshness.js'
import type { IndexAdvisor } from './index-advice.js'
import type { PlanProbes } from './plan-probes.js'
import type { RecordScope } from './scope.js'
import type { SharesStore } from './shares-store.js'
import { createRecordStore, type RecordStore } from './store.js'
import type { UserDirectory } from './user-directory.js'

/**
 * Which of these file ids the caller may read: those GET /api/v1/files/:id would show it. The files module
 * answers (it is built before records and passed in by app.ts); a `file` field stores only such ids.
 */
export type ReadableFiles = (principal: Principal, ids: readonly string[]) => Promise<ReadonlySet<string>>

export interface RecordsDeps {
  collections: CollectionsService
  access: AccessService
  recordAccess: RecordAccess
  settings: SettingsService
  shares: SharesStore
  readableFiles: ReadableFiles
  /** The project's users, for relations to them (decision 061). */
  users: UserDirectory
  events: EventBus<RecordEvents>
  hooks: WriteHooks
  /** Write versions, cached totals and ETags (decision 025). */
  freshness: Freshness
  /** Shapes of lists and the indexes that would serve the slow ones (issue 33). */
  advisor: IndexAdvisor
  /** Bounded counts a list's plan choice asks for, cached per database (plan-probes.ts). */
  planProbes: PlanProbes
  /** Refreshes a table's planner statistics once the rows written since reach a quarter of it (issue 33). */
  statistics: StatisticsPacer
  clock: Clock
  log: Logger
}

/** Everything one operation on one collection needs, opened for one caller and one action. */
export interface Opened {
  readonly principal: Principal
  readonly collection: Collection
  readonly shape: CollectionShape
  readonly handle: DbHandle
  readonly locale: string
  /** The locale filters and sorts compare translatable fields in (the default one for `*`). */
  readonly compareLocale: string
  /** Resolves the grants' row filters (any field). */
  readonly resolver: FieldResolver
  /** Resolves the request's own filter and sort: only fields the caller may read. */
  readonly requestResolver: FieldResolver
  readonly store: RecordStore
  readonly scope: RecordScope & { admin: boolean }
  /** The project's other collections, for checks that ignore the caller's access (relation targets exist). */
  readonly targets: RelationTargets
  /** The files the caller may read, for the check of `file` field values. */
  readonly readableFiles: ReadableFiles
  /** The project's users: who a relation to users may name, what its expand and filters show (decision 061). */
  readonly users: UserDirectory
}

export interface RelationTargets {
  /** The store of a collection of the project, whoever asks; null when there is no such collection. */
  storeOf(projectId: string, name: string): Promise<RecordStore | null>
}

const localePattern = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$/

interface Prepared {
  /** The handle the store was built on: an r2_sql collection is read from more than one copy (decision 036). */
  handle: DbHandle
  shape: CollectionShape
  resolver: FieldResolver
  store: RecordStore
}

/** The store of a collection's table: its fields in columns, or in a document (kv). */
export function storeOf(collection: Collection, handle: DbHandle, resolver: FieldResolver): RecordStore {
  return createRecordStore(
    handle,
    collection.name,
    resolver,
    layoutOf(collection) === 'document' ? collection.fields : null,
  )
}

/** Opens collections for callers: the collection, its database, the caller's scope for the action. */
export function createOpener(deps: RecordsDeps) {
  // What depends only on the collection (a new object after every schema change) and the locale is built
  // once: its shape, its resolver, its store with their prepared statements.
  const prepared = new WeakMap<Collection, Map<string, Prepared>>()
  function prepare(collection: Collection, handle: DbHandle, locale: string): Prepared {
    let byLocale = prepared.get(collection)
    if (!byLocale) prepared.set(collection, (byLocale = new Map()))
    let entry = byLocale.get(locale)
    if (!entry || entry.handle !== handle) {
      if (byLocale.size >= 50) byLocale.clear() // locales come from requests: keep the cache bounded
      const shape = shapeOf(collection, handle.kind)
      const resolver = fieldResolver(shape, locale)
      entry = { handle, shape, resolver, store: storeOf(collection, handle, resolver) }
      byLocale.set(locale, entry)
    }
    return entry
  }

  // Relation targets are only asked which ids exist: no locale, no scope, one store per collection.
  const targetStores = new WeakMap<Collection, { handle: DbHandle; store: RecordStore }>()
  const targets: RelationTargets = {
    async storeOf(projectId, name) {
      let collection: Collection
      try {
        collection = await deps.collections.get(projectId, name)
      } catch (err) {
        if (err instanceof AppError && err.code === 'collection_not_found') return null
        throw err
      }
      const handle = await deps.collections.handleOf(collection)
      let entry = targetStores.get(collection)
      if (entry?.handle !== handle) {
        entry = { handle, store: storeOf(collection, handle, fieldResolver(shapeOf(collection, handle.kind), 'en')) }
        targetStores.set(collection, entry)
      }
      return entry.store
    },
  }

  /** The collection; one that does not exist is as refused to an anonymous caller its grants would not let in (401, decision 012). */
  async function collectionFor(principal: Principal, name: string, action: string): Promise<Collection> {
    const collection = await deps.collections.find(principal.projectId, name)
    if (collection) return collection
    if (!(await deps.recordAccess.anonymousMay(principal, null, name, action)))
      deps.recordAccess.refuse(principal, name, action)
    return deps.collections.get(principal.projectId, name) // throws collection_not_found
  }

  return async function open(principal: Principal, name: string, action: string, locale?: string): Promise<Opened> {
    const collection = await collectionFor(principal, name, action)
    const scope = await deps.recordAccess.scope(principal, collection, action)
    if (!scope.allowed) deps.recordAccess.refuse(principal, collection.name, action)
    // Anything but a read writes (an r2_sql collection then claims its working copy, decision 036).
    const handle = await deps.collections.handleOf(collection, action === 'read' ? 'read' : 'write')
    const chosen = locale ?? (await deps.settings.get(principal.projectId, 'i18n.defaultLocale'))
    if (chosen !== '*' && !localePattern.test(chosen))
      throw new AppError('invalid_request', 'locale must be a BCP-47 locale or *')
    // Filters and sorts compare a translatable field in the request's locale (no fallback).
    const compareLocale = chosen === '*' ? await deps.settings.get(principal.projectId, 'i18n.defaultLocale') : chosen
    const { shape, resolver, store } = prepare(collection, handle, compareLocale)
    const requestResolver = scope.fields ? fieldResolver(shape, compareLocale, scope.fields) : resolver
    return {
      principal,
      collection,
      shape,
      handle,
      locale: chosen,
      compareLocale,
      resolver,
      requestResolver,
      store,
      scope,
      targets,
      readableFiles: deps.readableFiles,
      users: deps.users,
    }
  }
}

export type Opener = ReturnType<typeof createOpener>
