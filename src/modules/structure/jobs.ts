import type { Clock } from '../../lib/clock.js'
import { isAppError, type AppError } from '../../lib/errors.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { CollectionsService } from '../collections/index.js'
import type { RecordsService } from '../records/index.js'
import { fieldStructure, type FieldStructure } from './field-structure.js'
import { GroupSet } from './groups.js'
import { failureLimit, type RepairBlock } from './present.js'
import { applyFixes, type CheckedFix } from './repairer.js'
import { candidates, type CandidateRow, type Candidates, type Opened } from './rows.js'
import { issuesOf, scanBatch } from './scanner.js'
import type { JobProgress, JobRow, JobStore } from './store.js'

export interface JobDeps {
  store: JobStore
  collections: CollectionsService
  records: RecordsService
  clock: Clock
  log: Logger
  /** Awaited before every batch: by default one turn of the event loop, so a job never starves requests. */
  pace: () => Promise<void>
}

export const jobLimits = {
  /** Rows a scan job examines per batch (its byte cap applies too). */
  scanRows: 200,
  /** Rows a repair job walks per batch; each may be an update. */
  repairRows: 20,
  /** Write conflicts one row may meet before it counts as failed. */
  attempts: 3,
} as const

type Step = 'go' | 'stop'

/**
 * Runs scan and repair jobs in the background, batch by batch. The job row is the truth: progress is
 * saved after every batch only while the row is still `running`, so a DELETE or a structure change made
 * on any instance stops the walk at its next batch. Each batch re-reads the collection and reopens it as
 * the caller, so a changed structure supersedes the job and changed permissions apply.
 */
export function createJobRunner(deps: JobDeps) {
  const running = new Set<Promise<void>>()
  let stopping = false

  function track(run: Promise<void>): void {
    running.add(run)
    void run.finally(() => running.delete(run))
  }

  async function reopen(
    job: JobRow,
    principal: Principal,
  ): Promise<{ opened: Opened; fs: FieldStructure } | 'gone' | 'superseded'> {
    const collection = await deps.collections.find(job.project_id, job.collection)
    if (!collection || collection.id !== job.collection_id) return 'gone'
    const def = collection.fields.find((f) => f.name === job.field)
    const fs = def ? fieldStructure(def) : null
    if (!fs || fs.fingerprint !== job.fingerprint) return 'superseded'
    return { opened: await deps.records.open(principal, job.collection, 'read'), fs }
  }

  /** Moves the job to a final status with its last figures; the walk stops. */
  async function end(job: JobRow, status: 'complete' | 'superseded', snapshot: () => JobProgress): Promise<Step> {
    await deps.store.finish(job.project_id, job.id, status, snapshot())
    return 'stop'
  }

  async function loop(job: JobRow, snapshot: () => JobProgress, step: () => Promise<Step>): Promise<void> {
    try {
      for (;;) {
        await deps.pace()
        if (stopping) {
          await deps.store.finish(job.project_id, job.id, 'failed', {
            ...snapshot(),
            error: 'The server stopped before the job finished; start it again',
          })
          return
        }
        // Checked before every batch, so nothing is examined or written once the job was stopped.
        if (!(await deps.store.isRunning(job.project_id, job.id))) return
        if ((await step()) === 'stop') return
      }
    } catch (err) {
      deps.log.error({ err, jobId: job.id, collection: job.collection, field: job.field }, 'structure job failed')
      const error = isAppError(err) ? err.message : 'The job failed on an internal error; see the server log'
      await deps.store
        .finish(job.project_id, job.id, 'failed', { ...snapshot(), error })
        .catch((e: unknown) => deps.log.warn({ err: e }, 'could not mark a structure job failed'))
    }
  }

  function runScan(job: JobRow, principal: Principal): Promise<void> {
    let checked = 0
    let invalid = 0
    let cursor: string | null = null
    let groups: GroupSet | null = null
    const snapshot = (): JobProgress => ({
      checked,
      invalid,
      cursor,
      groups: JSON.stringify(groups?.list() ?? []),
      updated_at: deps.clock.now(),
    })
    return loop(job, snapshot, async () => {
      const at = await reopen(job, principal)
      if (at === 'gone') return 'stop'
      if (at === 'superseded') return end(job, 'superseded', snapshot)
      groups ??= new GroupSet(at.fs)
      const batch = await scanBatch(candidates(at.opened, at.fs).source, at.fs, groups, cursor, jobLimits.scanRows)
      checked += batch.checked
      invalid += batch.invalid
      cursor = batch.lastId
      if (batch.done) return end(job, 'complete', snapshot)
      return (await deps.store.progress(job.project_id, job.id, snapshot())) ? 'go' : 'stop'
    })
  }

  function runRepair(job: JobRow, principal: Principal, fixes: readonly CheckedFix[]): Promise<void> {
    let checked = 0
    let invalid = 0
    let cursor: string | null = null
    let groups: GroupSet | null = null
    const block: RepairBlock = { fixes: fixes.length, repaired: 0, skipped: 0, failed: 0, failures: [] }
    const snapshot = (): JobProgress => ({
      checked,
      invalid,
      cursor,
      groups: JSON.stringify(groups?.list() ?? []),
      repair: JSON.stringify(block),
      updated_at: deps.clock.now(),
    })
    const fail = (id: string, reason: string) => {
      block.failed++
      if (block.failures.length < failureLimit) block.failures.push({ id, reason: reason.slice(0, 300) })
    }

    // Repairs one row as the caller, recomputed from its current value; returns the value it holds after.
    async function repairRow(fs: FieldStructure, rows: Candidates, row: CandidateRow): Promise<unknown> {
      let current: CandidateRow | null = row
      for (let attempt = 0; attempt < jobLimits.attempts && current; attempt++) {
        const outcome = applyFixes(current.value, fs, fixes)
        if (outcome.refusal !== null) {
          fail(row.id, outcome.refusal)
          return current.value
        }
        if (outcome.applied === 0) {
          block.skipped++
          return current.value
        }
        try {
          await deps.records.update(
            principal,
            job.collection,
            row.id,
            { [fs.def.name]: outcome.value },
            { version: current.version, onMismatch: 'conflict' },
          )
          block.repaired++
          return outcome.value
        } catch (err) {
          if (isAppError(err) && err.code === 'conflict') {
            current = await rows.reread(row.id)
            continue
          }
          if (!isAppError(err))
            deps.log.error({ err, jobId: job.id, recordId: row.id }, 'structure repair of a record failed')
          fail(row.id, reasonOf(err))
          return current.value
        }
      }
      if (!current) {
        // Gone meanwhile (deleted, or out of the caller's rows): nothing left to repair.
        block.skipped++
        return null
      }
      fail(row.id, 'The record kept changing while it was repaired; scan again')
      return current.value
    }

    return loop(job, snapshot, async () => {
      const at = await reopen(job, principal)
      if (at === 'gone') return 'stop'
      if (at === 'superseded') return end(job, 'superseded', snapshot)
      groups ??= new GroupSet(at.fs)
      const rows = candidates(at.opened, at.fs)
      const batch = await rows.source.next(cursor, jobLimits.repairRows)
      for (const row of batch) {
        const after = await repairRow(at.fs, rows, row)
        checked++
        cursor = row.id
        if (groups.add(row.id, issuesOf(after, at.fs))) invalid++
      }
      if (batch.length < jobLimits.repairRows) return end(job, 'complete', snapshot)
      return (await deps.store.progress(job.project_id, job.id, snapshot())) ? 'go' : 'stop'
    })
  }

  return {
    /** Starts a stored scan job in the background. */
    scan(job: JobRow, principal: Principal): void {
      track(runScan(job, principal))
    },

    /** Starts a stored repair job in the background. */
    repair(job: JobRow, principal: Principal, fixes: readonly CheckedFix[]): void {
      track(runRepair(job, principal, fixes))
    },

    /** Stops every job of this instance at its next batch (marked failed: the server stopped) and waits for them. */
    async close(): Promise<void> {
      stopping = true
      await Promise.allSettled([...running])
    },
  }
}

function reasonOf(err: unknown): string {
  if (!isAppError(err)) return 'An internal error; see the server log'
  const e: AppError = err
  if (e.code === 'record_not_found') return 'Not found among the records you may update'
  return `${e.code}: ${e.message}`
}

export type JobRunner = ReturnType<typeof createJobRunner>
