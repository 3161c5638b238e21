import type { CompiledQuery, Kysely, Transaction } from 'kysely'
import { runCompiled } from '../../../lib/db/index.js'
import type { RunStatus, StepStatus } from '../model.js'

export interface RunRow {
  id: string
  project_id: string
  flow_id: string
  version: number
  status: RunStatus
  trigger_type: string
  /** JSON: { event, collection, method, body }. */
  trigger: string
  /** JSON: who the run acts as (see acting.ts). */
  acting: string
  /** JSON { code, message, step?, statusCode?, attempts? }. */
  error: string | null
  depth: number
  parent_run_id: string | null
  created_at: number
  started_at: number | null
  finished_at: number | null
  duration_ms: number | null
}

export interface StepLogRow {
  run_id: string
  position: number
  project_id: string
  step_key: string
  type: string
  status: StepStatus
  input: string | null
  output: string | null
  error: string | null
  /** JSON { lines, unresolved }. */
  logs: string | null
  attempts: number
  started_at: number
  duration_ms: number
}

/** A run's end as the executor produced it, written in one transaction with its step logs. */
export interface RunFinish {
  readonly projectId: string
  readonly flowId: string
  readonly runId: string
  readonly status: RunStatus
  readonly error: string | null
  readonly finishedAt: number
  readonly durationMs: number
  readonly stepLogs: readonly StepLogRow[]
}

type Tables = { flow_runs: RunRow; flow_step_logs: StepLogRow }

export const activeRunStatuses = ['pending', 'running'] as const
// Rows per multi-row insert: 12 parameters a row stays far below both dialects' limits.
const insertChunk = 500

export type RunsStore = ReturnType<typeof createRunsStore>

/** SQL for `flow_runs` and `flow_step_logs`; this module is their only owner. Every function takes the project first. */
export function createRunsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  // The hot statements keep their compiled SQL (runCompiled: SQLite's direct path and group commit).
  const insertShape = db.insertInto('flow_runs').values(sampleRun()).compile()
  // Parameters in order: status, started_at, id, project_id, the pending status.
  const markRunningShape = db.updateTable('flow_runs').set({ status: 'running', started_at: 0 }).where('id', '=', '').where('project_id', '=', '').where('status', '=', 'pending').returning('id').compile()

  // The end-of-run statements keep their compiled SQL too (compiling dominated a small statement's cost).
  const finishShape = db
    .updateTable('flow_runs')
    .set({ status: 'completed', error: '', finished_at: 0, duration_ms: 0 })
    .where('id', '=', '')
    .where('project_id', '=', '')
    .where('status', 'in', activeRunStatuses)
    .compile()
  const logInsertShapes = new Map<number, CompiledQuery>()
  function logInsert(rows: readonly StepLogRow[]): CompiledQuery {
    let shape = logInsertShapes.get(rows.length)
    if (!shape) {
      shape = db.insertInto('flow_step_logs').values(rows.map(() => sampleLog())).compile()
      if (logInsertShapes.size < 512) logInsertShapes.set(rows.length, shape)
    }
    return { ...shape, parameters: rows.flatMap((row) => logColumns.map((column) => row[column])) }
  }

  async function finishIn(trx: Transaction<Tables>, finishes: readonly RunFinish[]): Promise<RunFinish[]> {
    const written: RunFinish[] = []
    for (const f of finishes) {
      // Parameters in order: status, error, finished_at, duration_ms, id, project_id, the active statuses.
      const result = await trx.executeQuery({ ...finishShape, parameters: [f.status, f.error, f.finishedAt, f.durationMs, f.runId, f.projectId, ...activeRunStatuses] })
      // A cancel or a reap that won keeps its status; the late result (and its step logs) is dropped.
      if (Number(result.numAffectedRows ?? 0) > 0) written.push(f)
    }
    const logs = written.flatMap((f) => f.stepLogs)
    for (let i = 0; i < logs.length; i += insertChunk) await trx.executeQuery(logInsert(logs.slice(i, i + insertChunk)))
    return written
  }

  return {
    /** Inserts a new run row (pending or running). */
    async insertRun(row: RunRow): Promise<void> {
      await runCompiled(db, { ...insertShape, parameters: runColumns.map((column) => row[column]) })
    },

    /** pending → running; false when the run is no longer pending (cancelled, reaped, deleted). */
    async markRunning(projectId: string, runId: string, startedAt: number): Promise<boolean> {
      const rows = await runCompiled(db, { ...markRunningShape, parameters: ['running', startedAt, runId, projectId, 'pending'] })
      return rows.length > 0
    },

    /**
     * Claims a running run this instance did not start (a job another instance added, or one moved back
     * after its instance stalled): true only the first time (its started_at still equals created_at).
     */
    async claimRunning(projectId: string, runId: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable('flow_runs')
        .set({ started_at: now })
        .where('project_id', '=', projectId)
        .where('id', '=', runId)
        .where('status', '=', 'running')
        .where((eb) => eb('started_at', '=', eb.ref('created_at')))
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /**
     * Writes finished runs, all in one transaction: each run's final status (only while it is still
     * pending or running) and, for those, their step logs. Answers the runs that were written.
     */
    finish(finishes: readonly RunFinish[]): Promise<RunFinish[]> {
      return db.transaction().execute((trx) => finishIn(trx, finishes))
    },

    async byId(projectId: string, runId: string): Promise<RunRow | undefined> {
      return db.selectFrom('flow_runs').selectAll().where('project_id', '=', projectId).where('id', '=', runId).executeTakeFirst()
    },

    /** A page of the project's runs, newest first, with the total matching. */
    async list(projectId: string, query: { page: number; limit: number; status?: RunStatus; flowId?: string }): Promise<{ rows: RunRow[]; total: number }> {
      let base = db.selectFrom('flow_runs').where('project_id', '=', projectId)
      if (query.status) base = base.where('status', '=', query.status)
      if (query.flowId) base = base.where('flow_id', '=', query.flowId)
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset((query.page - 1) * query.limit).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ])
      return { rows, total: Number(count.n) }
    },

    async stepLogs(projectId: string, runId: string): Promise<StepLogRow[]> {
      return db.selectFrom('flow_step_logs').selectAll().where('project_id', '=', projectId).where('run_id', '=', runId).orderBy('position').execute()
    },

    /** Deletes a run and its step logs; false when there was none. */
    async delete(projectId: string, runId: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('flow_step_logs').where('project_id', '=', projectId).where('run_id', '=', runId).execute()
        const result = await trx.deleteFrom('flow_runs').where('project_id', '=', projectId).where('id', '=', runId).executeTakeFirst()
        return Number(result.numDeletedRows) > 0
      })
    },

    /** Ends a pending or running run (cancel); false when it is missing or already terminal. */
    async endActive(projectId: string, runId: string, status: RunStatus, error: string, finishedAt: number): Promise<boolean> {
      const result = await db
        .updateTable('flow_runs')
        .set((eb) => ({ status, error, finished_at: finishedAt, duration_ms: eb(eb.val(finishedAt), '-', eb.fn.coalesce('started_at', 'created_at')).$castTo<number>() }))
        .where('project_id', '=', projectId)
        .where('id', '=', runId)
        .where('status', 'in', activeRunStatuses)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /**
     * Fails active runs created before `cutoff` (orphaned), in one project or, with null, in every project
     * (the hourly tick; the name of the argument says it reads across projects). Answers those it ended.
     */
    async reapStale(projectIdOrAll: string | null, cutoff: number, error: string, now: number): Promise<{ id: string; project_id: string; flow_id: string }[]> {
      let stale = db.selectFrom('flow_runs').select(['id', 'project_id', 'flow_id']).where('status', 'in', activeRunStatuses).where('created_at', '<', cutoff)
      if (projectIdOrAll !== null) stale = stale.where('project_id', '=', projectIdOrAll)
      const candidates = await stale.limit(1000).execute()
      if (candidates.length === 0) return []
      const reaped = await db
        .updateTable('flow_runs')
        .set((eb) => ({ status: 'failed', error, finished_at: now, duration_ms: eb(eb.val(now), '-', eb.fn.coalesce('started_at', 'created_at')).$castTo<number>() }))
        .where('id', 'in', candidates.map((c) => c.id))
        .where('status', 'in', activeRunStatuses)
        .returning(['id', 'project_id', 'flow_id'])
        .execute()
      return reaped
    },

    /** Runs of the project created in [from, to) (ms) by status (system_monthly_summary). */
    async countByStatusBetween(projectId: string, from: number, to: number): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('flow_runs')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .where('project_id', '=', projectId)
        .where('created_at', '>=', from)
        .where('created_at', '<', to)
        .groupBy('status')
        .execute()
      return Object.fromEntries(rows.map((r) => [String(r.status), Number(r.n)]))
    },

  }
}

const runColumns = Object.keys(sampleRun()) as (keyof RunRow)[]
const logColumns = Object.keys(sampleLog()) as (keyof StepLogRow)[]

/** A step log with every column, in the order the compiled insert binds them (`logColumns`). */
function sampleLog(): StepLogRow {
  return { run_id: '', position: 0, project_id: '', step_key: '', type: '', status: 'completed', input: '', output: '', error: '', logs: '', attempts: 1, started_at: 0, duration_ms: 0 }
}

/** A row with every column, in the order the compiled insert binds them (`runColumns`). */
function sampleRun(): RunRow {
  return {
    id: '', project_id: '', flow_id: '', version: 0, status: 'pending', trigger_type: '', trigger: '', acting: '', error: null, depth: 0, parent_run_id: null,
    created_at: 0, started_at: null, finished_at: null, duration_ms: null,
  }
}
