import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import { alwaysReadable } from './codec.js'
import { createOpener, type Opened, type RecordsDeps } from './context.js'
import type { ApiRecord } from './events.js'
import { enrich, parseExpand } from './expand.js'
import type { ShapeAdvice } from './index-advice.js'
import { ifNoneMatch } from './freshness.js'
import { both, listRows, requestFilter, type ListParams } from './list.js'
import { present } from './present.js'
import { aggregateRows, type AggregateQuery, type AggregateRow } from './aggregate.js'
import { findRows, matchingIds, type FindQuery } from './query.js'
import { withRelationPaths } from './relation-paths.js'
import type { Row } from './store.js'
import { createWriter, type VersionCheck } from './write.js'

export interface ReadOptions {
  expand?: string
  fields?: string
  locale?: string
  includeDeleted?: boolean
}

export interface ListQuery extends ReadOptions {
  page: number
  limit: number
  sortBy?: string
  order?: 'asc' | 'desc'
  filter?: string
  /** A filter the page is held to besides `filter` (a saved view's): checked and resolved as the caller, as `filter` is, the two ANDed. */
  baseFilter?: string
  search?: string
  cursor?: string
  path?: string
}

export interface ListEnvelope {
  data: ApiRecord[] | { id: unknown; path: string; value: unknown }[]
  total: number
  page: number
  limit: number
  hasMore: boolean
  cursors?: { next: string | null; previous: string | null }
}

/** A read answered with its weak ETag (null: none), or, when the client's copy is current, the tag alone (body null). */
export interface Conditional<T> {
  etag: string | null
  body: T | null
}

/** `a,b` → the fields asked for, each a readable field of the collection. Throws invalid_request. */
function projectionOf(opened: Opened, raw: string | undefined): ReadonlySet<string> | null {
  if (raw === undefined || raw === '') return null
  const names = raw
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)
  for (const name of names) {
    if (!alwaysReadable.has(name) && !opened.shape.byName.has(name)) {
      throw new AppError('invalid_request', `fields: unknown field "${name.slice(0, 60)}"`, {
        field: name.slice(0, 60),
      })
    }
  }
  return new Set(names)
}

/** The records API of every collection (core-api § Record endpoints), over the caller's scope. */
export function createRecordsService(deps: RecordsDeps) {
  const open = createOpener(deps)
  const opener = open
  const writer = createWriter(deps, open)

  async function shape(opened: Opened, rows: Row[], options: ReadOptions): Promise<ApiRecord[]> {
    const projection = projectionOf(opened, options.fields)
    const view = { locale: opened.locale, projection, allowlist: opened.scope.fields }
    const records = rows.map((row) => present(opened.shape, row, view))
    await enrich(open, opened, rows, records, parseExpand(options.expand), { projection })
    return records
  }

  /** The answer to a write shows what the caller may read: the read allowlist, or only system columns. */
  async function asReader(opened: Opened): Promise<Opened> {
    const read = await deps.recordAccess.scope(opened.principal, opened.collection, 'read')
    return { ...opened, scope: { ...opened.scope, fields: read.allowed ? read.fields : [] } }
  }

  async function assertMayViewDeleted(opened: Opened): Promise<void> {
    if (opened.scope.admin) return
    const decision = await deps.access.decide(opened.principal, `collections/${opened.collection.name}`, 'view_deleted')
    if (!decision.allowed) {
      if (opened.principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to see deleted records')
      throw new AppError('forbidden', `include_deleted needs collections/${opened.collection.name}:view_deleted`, {
        resource: `collections/${opened.collection.name}`,
        action: 'view_deleted',
      })
    }
  }

  /** One record with its ETag (decision 025): the tag is worked out before the row is read, from the write version. */
  async function getRecord(
    principal: Principal,
    name: string,
    id: string,
    options: ReadOptions & { meta?: string },
    known: string | undefined,
  ): Promise<Conditional<{ data: ApiRecord; meta?: unknown }>> {
    const opened = await open(principal, name, 'read', options.locale)
    if (options.includeDeleted) await assertMayViewDeleted(opened)
    const version = await deps.freshness.version(opened.collection)
    const etag = deps.freshness.etag(
      opened,
      version,
      ['get', id, options.fields ?? '', options.includeDeleted ?? false, options.meta ?? ''],
      options,
    )
    // A listed tag was made at this version, when the record was there: the version has not moved since.
    const asked = ifNoneMatch(known, etag)
    if (asked === 'tag') return { etag, body: null }
    const row = await opened.store.byId(id, opened.scope.rows, options.includeDeleted ?? false)
    if (!row) throw new AppError('record_not_found', 'Record not found')
    if (asked === 'any') return { etag, body: null }
    const [data] = await shape(opened, [row], options)
    if (options.meta !== 'i18n') return { etag, body: { data: data! } }
    const i18n: Record<string, Record<string, boolean>> = {}
    const full = present(opened.shape, row, { locale: '*', projection: null, allowlist: opened.scope.fields })
    const locales = new Set<string>()
    for (const def of opened.shape.stored.filter((f) => f.translatable)) {
      const map = full[def.name]
      if (map && typeof map === 'object') Object.keys(map).forEach((l) => locales.add(l))
    }
    for (const def of opened.shape.stored.filter((f) => f.translatable && f.name in full)) {
      const map = (full[def.name] ?? {}) as Record<string, unknown>
      i18n[def.name] = Object.fromEntries(
        [...locales].sort().map((l) => [l, typeof map[l] === 'string' && map[l] !== '']),
      )
    }
    return { etag, body: { data: data!, meta: { i18n } } }
  }

  /** A page with its ETag; the total comes from the count cache at the version read before the rows. */
  async function listRecords(
    principal: Principal,
    name: string,
    query: ListQuery,
    known: string | undefined,
  ): Promise<Conditional<ListEnvelope>> {
    const own = await open(principal, name, 'read', query.locale)
    if (query.includeDeleted) await assertMayViewDeleted(own)
    const params: ListParams = { ...query, includeDeleted: query.includeDeleted ?? false }
    const opened = await withRelationPaths(open, own, query.filter, query.baseFilter)
    const now = deps.clock.seconds()
    const filter = both(requestFilter(opened, query.baseFilter, now), requestFilter(opened, query.filter, now))
    // A filter through relations reads other collections, whose writes move other versions: such a
    // page is counted afresh and carries no ETag, as an expanded one.
    const version = opened === own ? await deps.freshness.version(opened.collection) : null
    // The filter as resolved ($CURRENT_USER, $NOW filled in), so two callers' "mine" are two requests.
    const counted = [filter, query.search ?? '', params.includeDeleted]
    const request = [
      'list',
      ...counted,
      query.page,
      query.limit,
      query.sortBy ?? '',
      query.order ?? '',
      query.cursor ?? null,
      query.fields ?? '',
      query.path ?? '',
    ]
    const etag = deps.freshness.etag(opened, version, request, query.path ? {} : query)
    if (ifNoneMatch(known, etag) !== 'none') return { etag, body: null }
    const page = await listRows(opened, params, filter, {
      count: (load) => deps.freshness.count(opened, version, counted, load),
      probes: deps.planProbes,
      observe: (seen) => deps.advisor.observe(opened, seen),
    })
    const records = await shape(
      opened,
      page.rows,
      query.path ? { ...query, expand: undefined, fields: undefined } : query,
    )
    const envelope = {
      total: page.total,
      page: query.page,
      limit: query.limit,
      hasMore: page.hasMore,
      ...(page.cursors ? { cursors: page.cursors } : {}),
    }
    if (!query.path) return { etag, body: { data: records, ...envelope } }
    const [head, ...rest] = query.path.split('.')
    if (!head || (!alwaysReadable.has(head) && !opened.shape.byName.has(head)))
      throw new AppError('invalid_request', 'path names a field (field.key…)')
    const data = records.map((r) => {
      let value: unknown = r[head]
      for (const key of rest)
        value =
          value !== null && typeof value === 'object' && !Array.isArray(value)
            ? (value as Record<string, unknown>)[key]
            : undefined
      return { id: r.id, path: query.path!, value: value ?? null }
    })
    return { etag, body: { data, ...envelope } }
  }

  return {
    hooks: deps.hooks,
    /** Opens a collection for a caller and an action (shares, transfers and capability tokens build on it). */
    open: opener,

    /** One record in `{ data }`, with `meta.i18n` (per-locale presence) on request. Throws record_not_found. */
    async get(
      principal: Principal,
      name: string,
      id: string,
      options: ReadOptions & { meta?: string },
    ): Promise<{ data: ApiRecord; meta?: unknown }> {
      return (await getRecord(principal, name, id, options, undefined)).body!
    },

    /**
     * `get` with its weak ETag; when `ifNoneMatch` names it, the answer is only the tag (body null), found
     * without reading the record. Throws as `get` does.
     */
    getConditional: getRecord,

    /** A page of records (page or cursor mode), or `path` values. Throws invalid_request, forbidden. */
    /**
     * The shapes of a collection's lists and, for the slow ones, the compound index that would serve them
     * (issue 33). For who may change the schema: creating the index is theirs (one PATCH of `indexes`).
     */
    async indexAdvice(principal: Principal, name: string): Promise<ShapeAdvice[]> {
      await deps.access.authorize(principal, 'schema/*:update')
      return deps.advisor.shapes(await deps.collections.get(principal.projectId, name))
    },

    async list(principal: Principal, name: string, query: ListQuery): Promise<ListEnvelope> {
      return (await listRecords(principal, name, query, undefined)).body!
    },

    /** `list` with its weak ETag; when `ifNoneMatch` names it, only the tag (body null), found without reading a row. Throws as `list` does. */
    listConditional: listRecords,

    /** Creates a record and returns it bare, as the caller may read it. */
    async create(
      principal: Principal,
      name: string,
      body: Record<string, unknown>,
      locale?: string,
    ): Promise<ApiRecord> {
      const { opened, row } = await writer.create(principal, name, body, locale)
      return (await shape(await asReader(opened), [row], {}))[0]!
    },

    /** Updates a record and returns the whole updated record. */
    async update(
      principal: Principal,
      name: string,
      id: string,
      body: Record<string, unknown>,
      check: VersionCheck,
      locale?: string,
    ): Promise<ApiRecord> {
      const { opened, row } = await writer.update(principal, name, id, body, check, locale)
      return (await shape(await asReader(opened), [row], {}))[0]!
    },

    delete: writer.delete,
    restore: writer.restore,

    /**
     * Records by filter, sort keys, offset and limit, as the caller may read them (row and column rules as
     * list), with whether more follow. Throws invalid_request, unauthorized, forbidden, collection_not_found.
     */
    async find(principal: Principal, name: string, query: FindQuery): Promise<{ data: ApiRecord[]; hasMore: boolean }> {
      const opened = await withRelationPaths(open, await open(principal, name, 'read'), query.filter)
      const filter = requestFilter(opened, query.filter, deps.clock.seconds())
      const rows = await findRows(opened, filter, query)
      const fields = query.fields && query.fields.length > 0 ? query.fields.join(',') : undefined
      const data = await shape(opened, rows.slice(0, query.limit), { fields })
      return { data, hasMore: rows.length > query.limit }
    },

    /**
     * The ids among `ids` (when given) matching the filter (when given) of records the caller may both read
     * and `action` (update or delete), at most `max`: what a write by ids or filter is about to touch.
     * Throws invalid_request (more than `max` match), unauthorized, forbidden, collection_not_found.
     */
    async matchingIds(
      principal: Principal,
      name: string,
      action: 'update' | 'delete',
      target: { filter?: string; ids?: readonly string[] },
      max: number,
    ): Promise<string[]> {
      const reading = await withRelationPaths(open, await open(principal, name, 'read'), target.filter)
      const acting = await open(principal, name, action)
      const filter = requestFilter(reading, target.filter, deps.clock.seconds())
      return matchingIds(reading, acting, filter, target.ids ?? null, max)
    },

    /**
     * Groups and aggregate functions (count, sum, avg, min, max) over the records the caller may read, with
     * the filter, compiled to one SELECT (GET /records/aggregate, flows' crud_query).
     * Throws invalid_request, unauthorized, forbidden, collection_not_found.
     */
    async aggregate(
      principal: Principal,
      name: string,
      query: AggregateQuery,
    ): Promise<{ data: AggregateRow[]; hasMore: boolean }> {
      const opened = await withRelationPaths(open, await open(principal, name, 'read'), query.filter)
      const filter = requestFilter(opened, query.filter, deps.clock.seconds())
      const { rows, hasMore } = await aggregateRows(opened, filter, query)
      return { data: rows, hasMore }
    },
  }
}

export type RecordsService = ReturnType<typeof createRecordsService>
