// Records of one collection, typed by the record interface R (`plinth types` emits one per collection).
import type { components } from './generated/openapi.js'
import type { Filter, FieldKey, RecordOf, SortKey, SystemKey } from './filter.js'
import type { Transport } from './transport.js'
import { createRecordExchange, type RecordExchange } from './records-exchange.js'

/** What a create or an update may set: the record's own fields (system columns are the server's). */
export type RecordInput<R> = Partial<Omit<R, SystemKey>> & { id?: string }

/** JSON-path operators of an update (docs/records.md): `{ $set: { 'meta.size': 3 }, $push: { tags: 'x' } }`. */
export interface JsonOperators {
  $set?: Record<string, unknown>
  $push?: Record<string, unknown>
  $pull?: Record<string, unknown>
  $unset?: Record<string, unknown> | string[]
}

export interface ListOptions<R> {
  /** Typed against R's fields; a string is sent as it is (the array format, or paths through relations). */
  filter?: Filter<R> | string
  /** A field (ascending unless `order` says otherwise), or `-field` for descending. */
  sortBy?: SortKey<R>
  /** Alias of sortBy. */
  sort?: SortKey<R>
  order?: 'asc' | 'desc'
  page?: number
  /** 1-100, 25 by default. */
  limit?: number
  /** Keyset mode: '' for the first page, then `cursors.next` or `cursors.previous` of the answer. */
  cursor?: string
  search?: string
  /** Relation fields (dot paths for nesting). */
  expand?: string | readonly string[]
  /** A projection; id, created_at and updated_at always come. */
  fields?: readonly FieldKey<R>[]
  locale?: string
  includeDeleted?: boolean
  signal?: AbortSignal
}

export interface ListPage<R> {
  data: RecordOf<R>[]
  total: number
  page: number
  limit: number
  hasMore: boolean
  /** In cursor mode. */
  cursors?: { next: string | null; previous: string | null }
}

export interface GetOptions<R> {
  expand?: string | readonly string[]
  fields?: readonly FieldKey<R>[]
  locale?: string
  includeDeleted?: boolean
  signal?: AbortSignal
}

export interface UpdateOptions {
  /**
   * The version the change was made against (the record's `_version`): sent as `If-Match`, so a record changed
   * since is refused with a ConflictError (412 `precondition_failed`) and nothing is written.
   */
  version?: number
  locale?: string
  signal?: AbortSignal
}

export type ImportResult<R> = Omit<components['schemas']['ImportResult'], 'records'> & { records: RecordOf<R>[] }

export interface CollectionClient<R> extends RecordExchange<R> {
  readonly name: string
  /** One page of records. */
  list(options?: ListOptions<R>): Promise<ListPage<R>>
  /** Every record the options select, page after page in cursor mode. */
  iterate(options?: Omit<ListOptions<R>, 'cursor' | 'page'>): AsyncGenerator<RecordOf<R>>
  /** One record; NotFoundError when it is missing or hidden. */
  get(id: string, options?: GetOptions<R>): Promise<RecordOf<R>>
  create(record: RecordInput<R>, options?: { locale?: string; signal?: AbortSignal }): Promise<RecordOf<R>>
  /** Changes fields (and JSON paths); with `version`, only if the record is still at that version. */
  update(
    id: string,
    changes: RecordInput<R> & JsonOperators & { _version?: number },
    options?: UpdateOptions,
  ): Promise<RecordOf<R>>
  /** Soft-deletes (or, with `permanent`, removes) a record. */
  delete(id: string, options?: { permanent?: boolean; signal?: AbortSignal }): Promise<{ permanent: boolean }>
  /** Restores a soft-deleted record. */
  restore(id: string, options?: { signal?: AbortSignal }): Promise<void>
  readonly bulk: {
    /** Creates many records in one request (each line checked as a create; failures reported per line). */
    create(
      records: readonly RecordInput<R>[],
      options?: { dryRun?: boolean; signal?: AbortSignal },
    ): Promise<ImportResult<R>>
    /** Deletes up to 200 records by id; answers how many were deleted. */
    delete(
      ids: readonly string[],
      options?: { permanent?: boolean; signal?: AbortSignal },
    ): Promise<{ deleted: number }>
  }
}

const list = (value: string | readonly string[] | undefined) =>
  value === undefined ? undefined : typeof value === 'string' ? value : value.join(',')

/** The records API of one collection over a Transport. */
export function createCollectionClient<R>(transport: Transport, name: string): CollectionClient<R> {
  const base = `/api/v1/collections/${encodeURIComponent(name)}/records`
  const one = (id: string) => `${base}/${encodeURIComponent(id)}`
  const listPage = (options: ListOptions<R> = {}) => {
    const sortKey: string | undefined = options.sortBy ?? options.sort
    return transport.request<ListPage<R>>('GET', base, {
      signal: options.signal,
      query: {
        filter: typeof options.filter === 'string' ? options.filter : options.filter && JSON.stringify(options.filter),
        sortBy: sortKey,
        // `field` ascending, `-field` descending, as the key reads (the API alone would sort `field` descending).
        order: options.order ?? (sortKey === undefined || sortKey.startsWith('-') ? undefined : 'asc'),
        page: options.page,
        limit: options.limit,
        cursor: options.cursor,
        search: options.search,
        expand: list(options.expand),
        fields: list(options.fields),
        locale: options.locale,
        include_deleted: options.includeDeleted,
      },
    })
  }
  return {
    name,
    list: listPage,
    async *iterate(options = {}) {
      let cursor: string | null = ''
      while (cursor !== null) {
        const page: ListPage<R> = await listPage({ ...options, cursor })
        yield* page.data
        cursor = page.hasMore ? (page.cursors?.next ?? null) : null
      }
    },
    async get(id, options = {}) {
      const reply = await transport.request<{ data: RecordOf<R> }>('GET', one(id), {
        signal: options.signal,
        query: {
          expand: list(options.expand),
          fields: list(options.fields),
          locale: options.locale,
          include_deleted: options.includeDeleted,
        },
      })
      return reply.data
    },
    create: (record, options = {}) =>
      transport.request<RecordOf<R>>('POST', base, {
        body: record,
        query: { locale: options.locale },
        signal: options.signal,
      }),
    update: (id, changes, options = {}) =>
      transport.request<RecordOf<R>>('PATCH', one(id), {
        body: changes,
        query: { locale: options.locale },
        headers: options.version === undefined ? {} : { 'if-match': String(options.version) },
        signal: options.signal,
      }),
    async delete(id, options = {}) {
      const reply = await transport.request<{ permanent: boolean }>('DELETE', one(id), {
        query: { permanent: options.permanent },
        signal: options.signal,
      })
      return { permanent: reply.permanent }
    },
    async restore(id, options = {}) {
      await transport.request('POST', `${one(id)}/restore`, { signal: options.signal })
    },
    bulk: {
      create: (records, options = {}) =>
        transport.request<ImportResult<R>>('POST', `${base}/import-ndjson`, {
          body: records.map((record) => JSON.stringify(record)).join('\n'),
          headers: { 'content-type': 'application/x-ndjson' },
          query: { dryRun: options.dryRun },
          signal: options.signal,
        }),
      delete: (ids, options = {}) =>
        transport.request<{ deleted: number }>('DELETE', `${base}/bulk`, {
          body: { ids },
          query: { permanent: options.permanent },
          signal: options.signal,
        }),
    },
    ...createRecordExchange<R>(transport, base),
  }
}
