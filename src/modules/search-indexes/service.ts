import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { RecordsService } from '../records/index.js'
import { compileIndex } from './compile.js'
import type { IndexFiles } from './files.js'
import { searchFile } from './query.js'
import { createBuildRunner } from './runner.js'
import {
  searchIndexLimits,
  type CreateSearchIndexInput,
  type SearchHit,
  type SearchIndex,
  type SearchIndexSource,
  type UpdateSearchIndexInput,
} from './schemas.js'
import { createSearchIndexesStore, type SearchIndexRow } from './store.js'

export interface SearchIndexesDeps {
  systemDb: Kysely<any>
  clock: Clock
  log: Logger
  access: Pick<AccessService, 'authorize' | 'decide'>
  audit: Pick<AuditService, 'record'>
  records: Pick<RecordsService, 'open' | 'list' | 'find'>
  files: IndexFiles
}

/** The permissions of search indexes (decision 042): read (list, get, query), create, update, delete, execute (build). */
const resource = 'system/search-indexes'
const notFound = (name: string) => new AppError('not_found', `Search index "${name.slice(0, 100)}" not found`)

/**
 * Search indexes (decision 042): named sets of collection fields compiled into SQLite FTS5 files in
 * object storage, built as the caller who asks (row and column rules apply), queried over the built file
 * with the querier's own rules, and marked stale when a source's records change in bulk.
 */
export function createSearchIndexesService(deps: SearchIndexesDeps) {
  const store = createSearchIndexesStore(deps.systemDb)
  const { clock, files, log } = deps
  // Aborted when the module closes: a build under way stops at its next page.
  const closing = new AbortController()

  async function rowOf(projectId: string, name: string): Promise<SearchIndexRow> {
    const row = await store.byName(projectId, name)
    if (!row) throw notFound(name)
    return row
  }

  /**
   * Every source must be a collection the caller may read, each field one of its fields the caller may
   * read: an index never names what its author could not see. Hidden means missing (STYLE 9): a
   * collection the caller may not read is collection_not_found, a field it may not read validation_error
   * as an unknown one.
   */
  async function checkSources(actor: Principal, sources: readonly SearchIndexSource[]): Promise<void> {
    for (const source of sources) {
      const opened = await deps.records.open(actor, source.collection, 'read').catch((err: unknown) => {
        if (isAppError(err) && (err.code === 'forbidden' || err.code === 'unauthorized')) {
          throw new AppError('collection_not_found', `Collection "${source.collection.slice(0, 100)}" not found`)
        }
        throw err
      })
      const allowlist = opened.scope.fields
      const unknown = source.fields.filter(
        (f) => !opened.shape.byName.has(f) || (allowlist !== null && !allowlist.includes(f)),
      )
      if (unknown.length > 0) {
        throw new AppError(
          'validation_error',
          `sources: ${source.collection} has no field ${unknown.map((f) => `"${f.slice(0, 60)}"`).join(', ')}`,
          {
            collection: source.collection,
            fields: unknown.map((f) => f.slice(0, 60)),
          },
        )
      }
    }
  }

  /** One build as `actor`: compile, upload, then make it the file queries read unless a newer build took over. */
  async function buildOnce(
    actor: Principal,
    projectId: string,
    indexId: string,
    signal?: AbortSignal,
  ): Promise<SearchIndexRow> {
    const buildId = newId()
    const row = await store.startBuild(projectId, indexId, buildId, clock.now())
    if (!row) throw new AppError('not_found', 'Search index not found')
    const file = files.tempFile()
    try {
      const stop = signal ? AbortSignal.any([signal, closing.signal]) : closing.signal
      const { documentCount } = await compileIndex(deps.records, actor, sourcesOf(row), file, buildId, stop)
      const sizeBytes = await files.publish(projectId, indexId, buildId, file)
      const finished = await store.finishBuild(
        projectId,
        indexId,
        { buildId, builtAt: clock.now(), documentCount, sizeBytes },
        clock.now(),
      )
      if (finished === false) await files.remove(projectId, indexId, buildId)
      else if (finished.replaced) await files.remove(projectId, indexId, finished.replaced)
    } catch (err) {
      files.discard(file)
      const message = isAppError(err)
        ? `${err.code}: ${err.message}`
        : 'internal: the build failed (see the server log)'
      if (!isAppError(err)) log.error({ err, indexId }, 'search index build failed')
      await store.failBuild(projectId, indexId, buildId, message.slice(0, 500), clock.now())
      throw err
    }
    return (await store.byId(projectId, indexId)) ?? row
  }

  const runner = createBuildRunner({ build: buildOnce, log })

  /** Starts a build in the background (coalesced with one already asked for by the same caller); status building at once. */
  async function startRebuild(actor: Principal, row: SearchIndexRow): Promise<void> {
    await store.markBuilding(row.project_id, row.id, clock.now())
    runner.request(actor, row.project_id, row.id).catch(() => {})
  }

  return {
    /** The project's search indexes, by name. Throws forbidden (system/search-indexes:read). */
    async list(actor: Principal): Promise<SearchIndex[]> {
      await deps.access.authorize(actor, `${resource}:read`)
      return (await store.list(actor.projectId)).map(present)
    },

    /** One index with its build state. Throws forbidden, not_found. */
    async get(actor: Principal, name: string): Promise<SearchIndex> {
      await deps.access.authorize(actor, `${resource}:read`)
      return present(await rowOf(actor.projectId, name))
    },

    /** Saves an index definition (status stale: never built). Throws forbidden, collection_not_found, validation_error, already_exists. */
    async create(actor: Principal, input: CreateSearchIndexInput): Promise<SearchIndex> {
      await deps.access.authorize(actor, `${resource}:create`)
      await checkSources(actor, input.sources)
      if (await store.byName(actor.projectId, input.name))
        throw new AppError('already_exists', `A search index named "${input.name}" already exists`, {
          name: input.name,
        })
      const now = clock.now()
      const row: SearchIndexRow = {
        id: newId(),
        project_id: actor.projectId,
        name: input.name,
        description: input.description,
        sources: JSON.stringify(input.sources),
        status: 'stale',
        build_id: null,
        built_at: null,
        document_count: 0,
        size_bytes: 0,
        pending_build_id: null,
        build_started_at: null,
        stale_seq: 0,
        pending_seq: null,
        error: null,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'search_index.created',
        actor,
        target: { type: 'search_index', id: row.id },
        details: { name: row.name, collections: input.sources.map((s) => s.collection) },
      })
      return present(row)
    },

    /** Changes the description or the sources (then the index is stale until rebuilt). Throws forbidden, not_found, collection_not_found, validation_error. */
    async update(actor: Principal, name: string, input: UpdateSearchIndexInput): Promise<SearchIndex> {
      await deps.access.authorize(actor, `${resource}:update`)
      const row = await rowOf(actor.projectId, name)
      if (input.sources) await checkSources(actor, input.sources)
      const changes = {
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.sources === undefined ? {} : { sources: JSON.stringify(input.sources) }),
        updated_at: clock.now(),
      }
      if (!(await store.update(actor.projectId, row.id, changes))) throw notFound(name)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'search_index.updated',
        actor,
        target: { type: 'search_index', id: row.id },
        details: { name, changed: Object.keys(input) },
      })
      return present((await store.byId(actor.projectId, row.id)) ?? row)
    },

    /** Deletes the index and its built file. Throws forbidden, not_found. */
    async delete(actor: Principal, name: string): Promise<void> {
      await deps.access.authorize(actor, `${resource}:delete`)
      const row = await rowOf(actor.projectId, name)
      if (!(await store.delete(actor.projectId, row.id))) throw notFound(name)
      if (row.build_id) await files.remove(actor.projectId, row.id, row.build_id)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'search_index.deleted',
        actor,
        target: { type: 'search_index', id: row.id },
        details: { name },
      })
    },

    /**
     * Starts a rebuild as the caller, in the background: answers the index with status building. What
     * the file will hold is what the caller may read. Throws forbidden (execute), not_found.
     */
    async rebuild(actor: Principal, name: string): Promise<SearchIndex> {
      await deps.access.authorize(actor, `${resource}:execute`)
      const row = await rowOf(actor.projectId, name)
      await startRebuild(actor, row)
      return present({ ...row, status: 'building' })
    },

    /**
     * Builds the index as the caller and waits for it (the build_search_index operation). Answers the index
     * as it stands after the build. Throws forbidden, not_found, and what the build throws (the sources'
     * refusals, limit_exceeded; the index is then failed).
     */
    async build(actor: Principal, name: string, signal?: AbortSignal): Promise<SearchIndex> {
      await deps.access.authorize(actor, `${resource}:execute`)
      const row = await rowOf(actor.projectId, name)
      await store.markBuilding(row.project_id, row.id, clock.now())
      return present(await runner.request(actor, row.project_id, row.id, signal))
    },

    /**
     * Searches the built file (GET …/query): words all matched, "phrases", prefix*; bm25 ranking; snippets.
     * Only what the caller may read now is matched and answered (see query.ts). Throws forbidden,
     * not_found, invalid_request (a malformed query), conflict (never built yet).
     */
    async query(
      actor: Principal,
      name: string,
      q: string,
      limit: number,
    ): Promise<{ data: SearchHit[]; index: SearchIndex }> {
      await deps.access.authorize(actor, `${resource}:read`)
      const row = await rowOf(actor.projectId, name)
      if (!row.build_id)
        throw new AppError(
          'conflict',
          `Search index "${name}" has not been built yet: POST /api/v1/search-indexes/${name}/rebuild`,
          { status: row.status },
        )
      const file = await files.open(actor.projectId, row.id, row.build_id)
      const data = await searchFile(deps.records, actor, file, q, Math.min(limit, searchIndexLimits.queryLimit))
      return { data, index: present(row) }
    },

    /** Marks every index drawing from the collection stale (records' import and truncate); their names. */
    async markStale(projectId: string, collection: string): Promise<string[]> {
      const rows = (await store.list(projectId)).filter((row) =>
        sourcesOf(row).some((s) => s.collection === collection),
      )
      await store.markStale(
        projectId,
        rows.map((r) => r.id),
        clock.now(),
      )
      return rows.map((r) => r.name)
    },

    /**
     * Starts a rebuild, as `actor`, of every index drawing from the collection that `actor` may build
     * (system/search-indexes:execute; finalize?rebuild=true); their names. Others stay stale.
     */
    async rebuildDependents(actor: Principal, collection: string): Promise<string[]> {
      if (!(await deps.access.decide(actor, resource, 'execute')).allowed) return []
      const rows = (await store.list(actor.projectId)).filter((row) =>
        sourcesOf(row).some((s) => s.collection === collection),
      )
      for (const row of rows) await startRebuild(actor, row)
      return rows.map((r) => r.name)
    },

    /**
     * Removed collections leave the indexes drawing from them (collections' onRemoved: a collection
     * deleted, or a database deleted with cascade): their sources go; an index left with none is deleted
     * with its file, the others are stale.
     */
    async removeCollections(projectId: string, names: readonly string[]): Promise<void> {
      const gone = new Set(names)
      for (const row of await store.list(projectId)) {
        const sources = sourcesOf(row)
        const kept = sources.filter((s) => !gone.has(s.collection))
        if (kept.length === sources.length) continue
        if (kept.length === 0) {
          await store.delete(projectId, row.id)
          if (row.build_id) await files.remove(projectId, row.id, row.build_id)
        } else {
          await store.update(projectId, row.id, { sources: JSON.stringify(kept), updated_at: clock.now() })
        }
      }
    },

    /** Resolves once no build is under way in this instance (tests; close). */
    settled: () => runner.settled(),

    /** Stops the builds under way (at their next page) and waits for them to end. */
    async close(): Promise<void> {
      closing.abort(new AppError('service_unavailable', 'The server is stopping'))
      await runner.settled()
    },
  }
}

export type SearchIndexesService = ReturnType<typeof createSearchIndexesService>

function sourcesOf(row: SearchIndexRow): SearchIndexSource[] {
  return JSON.parse(row.sources) as SearchIndexSource[]
}

function present(row: SearchIndexRow): SearchIndex {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    sources: sourcesOf(row),
    status: row.status,
    builtAt: row.built_at === null ? null : Math.floor(Number(row.built_at) / 1000),
    documentCount: Number(row.document_count),
    sizeBytes: Number(row.size_bytes),
    buildId: row.build_id,
    error: row.error,
    createdAt: Math.floor(Number(row.created_at) / 1000),
    updatedAt: Math.floor(Number(row.updated_at) / 1000),
  }
}
