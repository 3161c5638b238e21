import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { Opened, Opener } from './context.js'
import { createImportJobsStore, type ImportJobRow } from './import-jobs-store.js'
import { createImportLedgerStore, type LedgerJobRow } from './import-ledger-store.js'
import type { DependentIndexes } from './search-indexes.js'

export const importJobLimits = {
  /** Errors kept per job, across its chunks. */
  errorSample: 100,
  /** A job expires this long after its last change (creation, a chunk, finalize). */
  ttlMs: 24 * 60 * 60 * 1000,
  /** Ledger entries outlive their job by a day more, so a job that is still there always finds its own. */
  ledgerKeepMs: 48 * 60 * 60 * 1000,
  sweepEveryMs: 10 * 60 * 1000,
} as const

/** One refused line of a chunk, as an import answers it. */
export interface ImportLineError {
  line: number
  /** Geospatial imports of GeoJSON, KML and GPX: the 0-based feature (line is then its 1-based number). */
  feature?: number
  code: string
  message: string
  field?: string
}

export interface ImportJobError extends ImportLineError {
  /** 1-based: the job's first chunk is 1. */
  chunk: number
}

/** An import job as the API answers it (core-api § Import job). */
export interface ImportJob {
  jobId: string
  collection: string
  status: 'pending' | 'complete'
  total: number
  imported: number
  failed: number
  chunks: number
  errors: ImportJobError[]
  createdAt: string
  updatedAt: string
}

/** What a chunk did, as its job keeps it: enough to answer a resent copy the same. */
export interface LandedChunk {
  imported: number
  failed: number
  total: number
  truncated: boolean
  errors: ImportLineError[]
  /** The stored records' ids, in line order. */
  ids: string[]
  /** Geospatial imports only: what the reader left out of each row (see UnknownProperties). */
  unknownProperties?: UnknownProperties[]
}

/** The properties of one row of a geospatial import that name no field: left out of the record, reported. */
export interface UnknownProperties {
  line: number
  feature?: number
  properties: string[]
}

/** A job a chunk is sent to, checked; `held` when the job already holds this very chunk. */
export interface ChunkTarget {
  job: ImportJobRow
  held?: LandedChunk
}

/** The job's ledger entry as it starts: the job row's own values (see ImportJobRow). */
function seedOf(row: ImportJobRow, now: number): LedgerJobRow {
  return {
    job_id: row.id,
    status: row.status === 'complete' ? 'complete' : 'pending',
    imported: Number(row.imported),
    failed: Number(row.failed),
    chunks: Number(row.chunks),
    errors: row.errors,
    updated_at: now,
  }
}

function present(row: ImportJobRow, entry: LedgerJobRow | undefined): ImportJob {
  const state = entry ?? seedOf(row, Number(row.updated_at))
  return {
    jobId: row.id,
    collection: row.collection,
    status: state.status === 'complete' ? 'complete' : 'pending',
    total: Number(row.total),
    imported: Number(state.imported),
    failed: Number(state.failed),
    chunks: Number(state.chunks),
    errors: JSON.parse(state.errors) as ImportJobError[],
    createdAt: new Date(Number(row.created_at)).toISOString(),
    updatedAt: new Date(Number(state.updated_at)).toISOString(),
  }
}

function conflict(jobId: string): AppError {
  return new AppError('conflict', 'This import job is complete; start a new one', { jobId })
}

/**
 * Import jobs: tallies over the NDJSON chunks of one import, for one caller. The job itself (owner,
 * collection, expiry) is a row of the system database; what its chunks did is kept in the import ledger of
 * the collection's own database, written in the transaction that stores each chunk's rows, so the tallies
 * can never disagree with the rows, whatever stops the process. Every endpoint needs create on the
 * collection. A job belongs to the person (or service key) that made it; anyone else's job, an expired one,
 * or one of another collection is 404 not_found.
 */
export function createImportJobs(deps: {
  systemDb: Kysely<any>
  open: Opener
  clock: Clock
  log: Logger
  searchIndexes: Pick<DependentIndexes, 'rebuild'>
}) {
  const store = createImportJobsStore(deps.systemDb)
  const ledger = createImportLedgerStore()
  const { clock } = deps

  /** Whose jobs the caller sees: a person's, or a service key's own. Throws unauthorized for anonymous callers. */
  function ownerOf(principal: Principal): string {
    if (principal.userId) return principal.userId
    if (principal.apiKeyId) return `key:${principal.apiKeyId}`
    throw new AppError('unauthorized', 'Sign in to use import jobs')
  }

  async function require(
    principal: Principal,
    name: string,
    jobId: string,
  ): Promise<{ row: ImportJobRow; opened: Opened }> {
    const opened = await deps.open(principal, name, 'create')
    const row = await store.find(principal.projectId, ownerOf(principal), jobId, clock.now())
    if (!row || row.collection !== opened.collection.name)
      throw new AppError('not_found', 'Import job not found', { jobId: jobId.slice(0, 64) })
    await ledger.ensure(opened.handle)
    return { row, opened }
  }

  /** A change of the job moves its expiry on. */
  async function touch(row: ImportJobRow, now: number): Promise<void> {
    await store.touch(row.id, now, now + importJobLimits.ttlMs)
  }

  async function sweep(): Promise<void> {
    const removed = await store.deleteExpiredAcrossProjects(clock.now())
    if (removed > 0) deps.log.info({ removed }, 'expired import jobs removed')
  }
  const ticker = clock.every(importJobLimits.sweepEveryMs, sweep, {
    onError: (err) => deps.log.warn({ err }, 'import job sweep failed'),
  })

  return {
    /**
     * Starts a job (status pending); readies the ledger in the collection's database and clears out the
     * entries of long-gone jobs there. Throws collection_not_found, forbidden, unauthorized.
     */
    async create(principal: Principal, name: string, total: number): Promise<ImportJob> {
      const opened = await deps.open(principal, name, 'create')
      const owner = ownerOf(principal)
      const now = clock.now()
      await ledger.ensure(opened.handle)
      await ledger.deleteStale(opened.handle.db, now - importJobLimits.ledgerKeepMs)
      const row: ImportJobRow = {
        id: newId(),
        project_id: principal.projectId,
        collection: opened.collection.name,
        owner,
        status: 'pending',
        total,
        imported: 0,
        failed: 0,
        chunks: 0,
        errors: '[]',
        created_at: now,
        updated_at: now,
        expires_at: now + importJobLimits.ttlMs,
      }
      await store.insert(row)
      return present(row, undefined)
    },

    /** The caller's job. Throws not_found, collection_not_found, forbidden, unauthorized. */
    async get(principal: Principal, name: string, jobId: string): Promise<ImportJob> {
      const { row, opened } = await require(principal, name, jobId)
      return present(row, await ledger.read(opened.handle.db, row.id))
    },

    /**
     * Marks the job complete and answers its final tallies; finalizing again answers the same. It waits for
     * a chunk being written to the job, and a chunk after it is refused, so the tallies answered are final.
     * With `rebuild`, the search indexes drawing from the collection that the caller may build
     * (system/search-indexes:execute) start rebuilding as the caller, listed in rebuildingSearchIndexes.
     * Throws what `get` throws.
     */
    async finalize(
      principal: Principal,
      name: string,
      jobId: string,
      rebuild: boolean,
    ): Promise<ImportJob & { rebuildingSearchIndexes?: string[] }> {
      const { row, opened } = await require(principal, name, jobId)
      const now = clock.now()
      const { entry, changed } = await opened.handle.db.transaction().execute(async (trx) => {
        const before = await ledger.lock(trx, opened.handle.kind, seedOf(row, now))
        if (before.status === 'complete') return { entry: before, changed: false }
        await ledger.complete(trx, row.id, now)
        return { entry: { ...before, status: 'complete', updated_at: now }, changed: true }
      })
      if (changed) await touch(row, now)
      if (!rebuild) return present(row, entry)
      return {
        ...present(row, entry),
        rebuildingSearchIndexes: await deps.searchIndexes.rebuild(principal, opened.collection.name),
      }
    },

    /**
     * Checks the job a chunk is sent to before the chunk is read: the caller's, and pending, unless it holds
     * this very chunk already (`key`; null for a dry run), which is then answered as it was. The write itself
     * checks again (`land`). Throws not_found, conflict (complete), and what `get` throws.
     */
    async target(principal: Principal, name: string, jobId: string, key: string | null): Promise<ChunkTarget> {
      const { row, opened } = await require(principal, name, jobId)
      const held = key === null ? undefined : await ledger.chunk(opened.handle.db, row.id, key)
      if (held) return { job: row, held: JSON.parse(held.outcome) as LandedChunk }
      const entry = await ledger.read(opened.handle.db, row.id)
      if ((entry?.status ?? row.status) !== 'pending') throw conflict(row.id)
      return { job: row }
    },

    /**
     * Writes a chunk of the job in one transaction of the collection's database: takes the job's lock,
     * refuses it when the job is complete (conflict, nothing written), answers the first outcome when the job
     * holds the chunk already (`write` is not called), else runs `write` (the rows) and records what it did,
     * the job's tallies and error sample included. A crash at any point keeps all of it or none.
     */
    async land(
      opened: Opened,
      job: ImportJobRow,
      key: string,
      write: (trx: Kysely<any>) => Promise<LandedChunk>,
    ): Promise<{ chunk: LandedChunk; held: boolean }> {
      return opened.handle.db.transaction().execute(async (trx) => {
        const entry = await ledger.lock(trx, opened.handle.kind, seedOf(job, clock.now()))
        const held = await ledger.chunk(trx, job.id, key)
        if (held) return { chunk: JSON.parse(held.outcome) as LandedChunk, held: true }
        if (entry.status !== 'pending') throw conflict(job.id)
        const chunk = await write(trx)
        const seq = Number(entry.chunks) + 1
        const sample = JSON.parse(entry.errors) as ImportJobError[]
        sample.push(
          ...chunk.errors
            .slice(0, Math.max(0, importJobLimits.errorSample - sample.length))
            .map((e) => ({ chunk: seq, ...e })),
        )
        await ledger.addChunk(
          trx,
          { job_id: job.id, chunk: key, seq, outcome: JSON.stringify(chunk) },
          {
            ...entry,
            imported: Number(entry.imported) + chunk.imported,
            failed: Number(entry.failed) + chunk.failed,
            chunks: seq,
            errors: JSON.stringify(sample),
            updated_at: clock.now(),
          },
        )
        return { chunk, held: false }
      })
    },

    /** Moves the job's expiry on after a chunk landed (the ledger holds the chunk already). */
    async touched(job: ImportJobRow): Promise<void> {
      await touch(job, clock.now())
    },

    /** Removes expired jobs now (also done every ten minutes). */
    sweep,

    /** Stops the sweep; resolves once a sweep under way has ended. */
    async close(): Promise<void> {
      await ticker.stop()
    },
  }
}

export type ImportJobs = ReturnType<typeof createImportJobs>
