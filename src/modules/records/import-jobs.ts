import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { Opener } from './context.js'
import { createImportJobsStore, type ImportJobRow } from './import-jobs-store.js'

export const importJobLimits = {
  /** Errors kept per job, across its chunks. */
  errorSample: 100,
  /** A job expires this long after its last change (creation, a chunk, finalize). */
  ttlMs: 24 * 60 * 60 * 1000,
  sweepEveryMs: 10 * 60 * 1000,
} as const

/** One refused line of a chunk, as an import answers it. */
export interface ImportLineError {
  line: number
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

/** What a chunk reports to its job. */
export interface ChunkOutcome {
  imported: number
  failed: number
  errors: readonly ImportLineError[]
}

function present(row: ImportJobRow): ImportJob {
  return {
    jobId: row.id,
    collection: row.collection,
    status: row.status === 'complete' ? 'complete' : 'pending',
    total: Number(row.total),
    imported: Number(row.imported),
    failed: Number(row.failed),
    chunks: Number(row.chunks),
    errors: JSON.parse(row.errors) as ImportJobError[],
    createdAt: new Date(Number(row.created_at)).toISOString(),
    updatedAt: new Date(Number(row.updated_at)).toISOString(),
  }
}

/**
 * Import jobs: tallies over the NDJSON chunks of one import, kept in the system database for one caller.
 * Every endpoint needs create on the collection. A job belongs to the person (or service key) that made
 * it; anyone else's job, an expired one, or one of another collection is 404 not_found.
 */
export function createImportJobs(deps: { systemDb: Kysely<any>; open: Opener; clock: Clock; log: Logger }) {
  const store = createImportJobsStore(deps.systemDb)
  const { clock } = deps

  /** Whose jobs the caller sees: a person's, or a service key's own. Throws unauthorized for anonymous callers. */
  function ownerOf(principal: Principal): string {
    if (principal.userId) return principal.userId
    if (principal.apiKeyId) return `key:${principal.apiKeyId}`
    throw new AppError('unauthorized', 'Sign in to use import jobs')
  }

  async function require(principal: Principal, name: string, jobId: string): Promise<ImportJobRow> {
    const opened = await deps.open(principal, name, 'create')
    const row = await store.find(principal.projectId, ownerOf(principal), jobId, clock.now())
    if (!row || row.collection !== opened.collection.name) throw new AppError('not_found', 'Import job not found', { jobId: jobId.slice(0, 64) })
    return row
  }

  async function sweep(): Promise<void> {
    const removed = await store.deleteExpiredAcrossProjects(clock.now())
    if (removed > 0) deps.log.info({ removed }, 'expired import jobs removed')
  }
  const timer = setInterval(() => void sweep().catch((err: unknown) => deps.log.warn({ err }, 'import job sweep failed')), importJobLimits.sweepEveryMs)
  timer.unref()

  return {
    /** Starts a job (status pending). Throws collection_not_found, forbidden, unauthorized. */
    async create(principal: Principal, name: string, total: number): Promise<ImportJob> {
      const opened = await deps.open(principal, name, 'create')
      const now = clock.now()
      const row: ImportJobRow = {
        id: newId(),
        project_id: principal.projectId,
        collection: opened.collection.name,
        owner: ownerOf(principal),
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
      return present(row)
    },

    /** The caller's job. Throws not_found, collection_not_found, forbidden, unauthorized. */
    async get(principal: Principal, name: string, jobId: string): Promise<ImportJob> {
      return present(await require(principal, name, jobId))
    },

    /**
     * Marks the job complete and answers its final tallies; finalizing again answers the same. Plinth has
     * no compiled search indexes, so a rebuild starts none. Throws not_found and what `get` throws.
     */
    async finalize(principal: Principal, name: string, jobId: string, rebuild: boolean): Promise<ImportJob & { rebuildingSearchIndexes?: string[] }> {
      const current = await require(principal, name, jobId)
      const now = clock.now()
      const done = current.status === 'complete' ? current : await store.complete(current.id, now, now + importJobLimits.ttlMs)
      if (!done) throw new AppError('not_found', 'Import job not found', { jobId: jobId.slice(0, 64) })
      return { ...present(done), ...(rebuild ? { rebuildingSearchIndexes: [] } : {}) }
    },

    /** The pending job a chunk is sent to. Throws not_found, conflict (already complete), and what `get` throws. */
    async pendingFor(principal: Principal, name: string, jobId: string): Promise<ImportJobRow> {
      const row = await require(principal, name, jobId)
      if (row.status !== 'pending') throw new AppError('conflict', 'This import job is complete; start a new one', { jobId: row.id })
      return row
    },

    /**
     * Adds a chunk's tallies to its job; the first errors join the job's sample. The counts are added in
     * one UPDATE; the sample is read and written back, so chunks sent in parallel may lose sample entries.
     */
    async addChunk(job: ImportJobRow, outcome: ChunkOutcome): Promise<void> {
      const now = clock.now()
      const after = await store.addChunk(job.id, { imported: outcome.imported, failed: outcome.failed, updatedAt: now, expiresAt: now + importJobLimits.ttlMs })
      if (!after || outcome.errors.length === 0) return
      const sample = JSON.parse(after.errors) as ImportJobError[]
      const room = importJobLimits.errorSample - sample.length
      if (room <= 0) return
      const chunk = Number(after.chunks)
      sample.push(...outcome.errors.slice(0, room).map((e) => ({ chunk, ...e })))
      await store.setErrors(job.id, JSON.stringify(sample))
    },

    /** Removes expired jobs now (also done every ten minutes). */
    sweep,

    async close(): Promise<void> {
      clearInterval(timer)
    },
  }
}

export type ImportJobs = ReturnType<typeof createImportJobs>
