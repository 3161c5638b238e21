import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { Logger } from '../../lib/log.js'
import type { StatisticsPacer } from '../../lib/db/index.js'
import { AppError, isAppError } from '../../lib/errors.js'
import type { EventBus } from '../../lib/events/index.js'
import type { Principal } from '../../lib/principal.js'
import type { Collection } from '../collections/index.js'
import { createBulkInserter, type BulkInserter } from './bulk-insert.js'
import type { Opened, Opener } from './context.js'
import type { ApiRecord, RecordEvents, WriteHooks } from './events.js'
import { enrich } from './expand.js'
import { lineError, refuseMissingReferences, refuseTaken, writeRows, type Candidate } from './import-batch.js'
import type { ImportJobs, ImportLineError, LandedChunk, UnknownProperties } from './import-jobs.js'
import { chunkKey, importLimits, ndjsonLines, parseLine, type ImportSource } from './import-source.js'
import { fullRecord, present } from './present.js'
import { createInput, newRow } from './new-row.js'
import type { Freshness } from './freshness.js'
import { createWritePipeline, type Committed } from './pipeline.js'
import type { DependentIndexes } from './search-indexes.js'
import type { Row } from './store.js'

/** The answer of POST /records/import-ndjson. */
export interface ImportResult {
  imported: number
  failed: number
  total: number
  truncated: boolean
  records: ApiRecord[]
  errors: ImportLineError[]
  staleSearchIndexes: string[]
  /** Geospatial imports: the properties each row held that name no field (left out, not refused). */
  unknownProperties?: UnknownProperties[]
}

/** What `run` answers: the result, and whether it is a held chunk's first outcome (nothing was written now). */
export interface ImportAnswer extends ImportResult {
  replayed: boolean
}

export interface ImportOptions {
  dryRun: boolean
  /** Attributes the chunk to an import job of the caller. */
  jobId?: string
  locale?: string
}

export interface ImportDeps {
  open: Opener
  hooks: WriteHooks
  events: EventBus<RecordEvents>
  freshness: Freshness
  jobs: ImportJobs
  /** Which search indexes draw from the collection: marked stale after every import that stored records. */
  searchIndexes: Pick<DependentIndexes, 'markStale'>
  /** The records module's statistics pacer, shared with the other bulk writes. */
  statistics: StatisticsPacer
  clock: Clock
  log: Logger
  /** Test hook awaited at three points of a write (AppOptions.importPace); none in production. */
  pace?: (point: ImportPacePoint) => Promise<void>
}

/** Where a write may be held: lines checked (nothing written), rows written (not committed), committed. */
export type ImportPacePoint = 'validated' | 'written' | 'committed'

/**
 * NDJSON imports (core-api § Record endpoints, Import NDJSON): each line validated as a create, the valid
 * ones stored in one transaction through the batch path, one record.create event per stored record after
 * the commit.
 */
export function createRecordImporter(deps: ImportDeps) {
  const pipeline = createWritePipeline(deps)
  // Planner statistics after bulk writes (decisions 024, 082), paced so a long import refreshes them a few times.
  const { statistics } = deps
  const inserters = new WeakMap<Collection, BulkInserter>()
  function inserterFor(opened: Opened): BulkInserter {
    let inserter = inserters.get(opened.collection)
    if (!inserter)
      inserters.set(
        opened.collection,
        (inserter = createBulkInserter(opened.handle.kind, opened.collection.name, opened.store.bulkDocument)),
      )
    return inserter
  }

  /** The stored rows as the caller may read them (the read allowlist, or only system columns without read). */
  async function presentStored(principal: Principal, opened: Opened, rows: Row[]): Promise<ApiRecord[]> {
    let fields: readonly string[] | null = []
    try {
      fields = (await deps.open(principal, opened.collection.name, 'read', opened.locale)).scope.fields
    } catch (err) {
      if (!isAppError(err) || (err.code !== 'forbidden' && err.code !== 'unauthorized')) throw err
    }
    const reader: Opened = { ...opened, scope: { ...opened.scope, fields } }
    const view = { locale: reader.locale, projection: null, allowlist: fields }
    const records = rows.map((row) => present(reader.shape, row, view))
    if (reader.shape.computed.length > 0) await enrich(deps.open, reader, rows, records, [], { projection: null })
    return records
  }

  /** The search indexes drawing from the collection, marked stale when records were stored; none otherwise. */
  async function staleAfter(opened: Opened, imported: number): Promise<string[]> {
    return imported > 0 ? deps.searchIndexes.markStale(opened.collection.projectId, opened.collection.name) : []
  }

  /** The answer to a chunk its job holds already: its first outcome, the records as they are now. */
  async function heldResult(principal: Principal, opened: Opened, chunk: LandedChunk): Promise<ImportAnswer> {
    const rows = new Map((await opened.store.byIds(chunk.ids, null)).map((row) => [String(row.id), row]))
    const stored = chunk.ids.map((id) => rows.get(id)).filter((row): row is Row => row !== undefined)
    const { imported, failed, total, truncated, errors, unknownProperties } = chunk
    const reported = unknownProperties === undefined ? {} : { unknownProperties }
    // Marked again: a process stopped between the commit and the mark would otherwise leave them ready.
    const staleSearchIndexes = await staleAfter(opened, imported)
    return {
      imported,
      failed,
      total,
      truncated,
      records: await presentStored(principal, opened, stored),
      errors,
      staleSearchIndexes,
      ...reported,
      replayed: true,
    }
  }

  async function runSource(
    principal: Principal,
    name: string,
    identity: string,
    options: ImportOptions,
    prepare: (opened: Opened) => ImportSource,
  ): Promise<ImportAnswer> {
    const opened = await deps.open(principal, name, 'create', options.locale)
    const key = options.jobId === undefined || options.dryRun ? null : chunkKey(identity, options.locale)
    const target = options.jobId === undefined ? null : await deps.jobs.target(principal, name, options.jobId, key)
    if (target?.held) return heldResult(principal, opened, target.held)
    const { rows, truncated, unknownProperties } = prepare(opened)
    const reported = unknownProperties === undefined ? {} : { unknownProperties }
    if (rows.length === 0) throw new AppError('invalid_request', 'The body holds no records')

    const errors: ImportLineError[] = []
    let candidates: Candidate[] = []
    const now = deps.clock.seconds()
    // Each line is checked, hooked (once: a refusal refuses that line alone, before anything is written)
    // and checked again as the row it stores.
    for (const { line, feature, read } of rows) {
      try {
        const input = createInput(opened, read())
        const data = await pipeline.hook(principal, {
          action: 'create',
          collection: opened.collection,
          before: null,
          data: input.data,
        })
        candidates.push({ line, feature, ...newRow(opened, data, input.system, now) })
      } catch (err) {
        errors.push(lineError(line, err, feature))
      }
    }
    candidates = await refuseMissingReferences(opened, candidates, errors)
    candidates = await refuseTaken(opened, inserterFor(opened), candidates, errors)
    await deps.pace?.('validated')

    const outcome = (stored: Row[]): LandedChunk => {
      errors.sort((a, b) => a.line - b.line)
      return {
        imported: stored.length,
        failed: errors.length,
        total: rows.length,
        truncated,
        errors,
        ids: stored.map((row) => String(row.id)),
        ...reported,
      }
    }
    if (options.dryRun) {
      const { failed, total, errors: refused } = outcome([])
      return {
        imported: candidates.length,
        failed,
        total,
        truncated,
        records: [],
        errors: refused,
        staleSearchIndexes: [],
        ...reported,
        replayed: false,
      }
    }
    let stored: Row[] = []
    const write = async (trx: Kysely<any>): Promise<LandedChunk> => {
      stored = await writeRows(trx, inserterFor(opened), candidates, errors)
      await deps.pace?.('written')
      return outcome(stored)
    }
    let chunk: LandedChunk
    if (target && key !== null) {
      const landed = await deps.jobs.land(opened, target.job, key, write)
      // The same chunk, sent twice at once, landed first from the other request.
      if (landed.held) return heldResult(principal, opened, landed.chunk)
      chunk = landed.chunk
    } else if (candidates.length > 0) {
      chunk = await opened.handle.db.transaction().execute(write)
    } else {
      chunk = outcome([])
    }
    await deps.pace?.('committed')
    // Statistics are advice: a failed refresh leaves the old ones (and PostgreSQL's autovacuum) in place.
    await statistics.wrote(opened.handle, opened.collection.name, chunk.imported, (err) =>
      deps.log.warn({ err, collection: opened.collection.name }, 'planner statistics not refreshed after an import'),
    )
    await pipeline.publish(
      principal,
      stored.map(
        (row): Committed => ({
          type: 'record.create',
          collection: opened.collection,
          after: fullRecord(opened.shape, row),
        }),
      ),
    )
    if (target) await deps.jobs.touched(target.job)
    const { imported, failed, total } = chunk
    return {
      imported,
      failed,
      total,
      truncated,
      records: await presentStored(principal, opened, stored),
      errors: chunk.errors,
      staleSearchIndexes: await staleAfter(opened, imported),
      ...(chunk.unknownProperties === undefined ? {} : { unknownProperties: chunk.unknownProperties }),
      replayed: false,
    }
  }

  return {
    /**
     * Imports up to 1000 records from an NDJSON body. Refused lines are reported, not thrown. With a job,
     * the chunk lands in it atomically with its rows; a chunk the job holds already (the same request
     * again, e.g. after a timeout) is answered as it was the first time and writes nothing. Throws
     * invalid_request (no record in the body), collection_not_found, forbidden, unauthorized, and for a
     * job not_found or conflict (complete: nothing written).
     */
    async run(principal: Principal, name: string, body: string, options: ImportOptions): Promise<ImportAnswer> {
      return runSource(principal, name, body, options, () => {
        const { lines, truncated } = ndjsonLines(body, importLimits.records)
        if (lines.length === 0)
          throw new AppError('invalid_request', 'The body holds no records: send one JSON object per line')
        return { rows: lines.map(({ line, text }) => ({ line, read: () => parseLine(text) })), truncated }
      })
    },

    /**
     * Imports the rows another format's reader makes (the geospatial importer): the same checks, writes,
     * job attribution, events and answer as `run`. `identity` is what identifies the request within a job
     * (its body and whatever options change the rows); `prepare` reads the body once the collection is
     * open and the job checked. Throws what `run` throws and what `prepare` throws.
     */
    runSource,
  }
}

export type RecordImporter = ReturnType<typeof createRecordImporter>
