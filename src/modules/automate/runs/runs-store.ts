import type { CompiledQuery, Kysely, Transaction } from 'kysely'
import { runCompiled } from '../../../lib/db/index.js'
import type { RunStatus } from '../model.js'
import {
  activeRunStatuses,
  insertChunk,
  liveRuns,
  logColumns,
  replacedLogColumns,
  runColumns,
  sampleLog,
  sampleRun,
  type ExpiredRun,
  type RunFinish,
  type RunRow,
  type RunWrites,
  type StepLogRow,
  type Tables,
} from './run-rows.js'

export type RunsStore = ReturnType<typeof createRunsStore>

/**
 * Rows cut into multi-row statements of power-of-two sizes up to `insertChunk`: a handful of statement
 * shapes for any batch size, so batches of every size do not crowd the connection's prepared statements out.
 */
export function chunksOf<T>(rows: readonly T[]): T[][] {
  const chunks: T[][] = []
  for (let i = 0; i < rows.length; ) {
    let size = 1
    while (size * 2 <= Math.min(rows.length - i, insertChunk)) size *= 2
    chunks.push(rows.slice(i, i + size))
    i += size
  }
  return chunks
}

/** SQL for `flow_runs` and `flow_step_logs`; this module is their only owner. Every function takes the project first. */
export function createRunsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  // The hot statements keep their compiled SQL (runCompiled: SQLite's direct path and group commit).
  const insertShape = db.insertInto('flow_runs').values(sampleRun()).compile()
  // Parameters in order: status, started_at, id, project_id, the pending status.
  const markRunningShape = db
    .updateTable('flow_runs')
    .set({ status: 'running', started_at: 0 })
    .where('id', '=', '')
    .where('project_id', '=', '')
    .where('status', '=', 'pending')
    .returning('id')
    .compile()

  // The end-of-run statements keep their compiled SQL too (compiling dominated a small statement's cost).
  const finishShape = db
    .updateTable('flow_runs')
    .set({ status: 'completed', error: '', finished_at: 0, duration_ms: 0 })
    .where('id', '=', '')
    .where('project_id', '=', '')
    .where('status', 'in', activeRunStatuses)
    .compile()
  const logUpsertShapes = new Map<number, CompiledQuery>()
  function logUpsert(rows: readonly StepLogRow[]): CompiledQuery {
    let shape = logUpsertShapes.get(rows.length)
    if (!shape) {
      shape = db
        .insertInto('flow_step_logs')
        .values(rows.map(() => sampleLog()))
        // A step that began with effects was written as running; its end replaces that row.
        .onConflict((oc) =>
          oc
            .columns(['run_id', 'position'])
            .doUpdateSet((eb) => Object.fromEntries(replacedLogColumns.map((c) => [c, eb.ref(`excluded.${c}`)]))),
        )
        .compile()
      if (logUpsertShapes.size < 512) logUpsertShapes.set(rows.length, shape)
    }
    return { ...shape, parameters: rows.flatMap((row) => logColumns.map((column) => row[column])) }
  }

  const runInsertShapes = new Map<number, CompiledQuery>()
  function runInsert(rows: readonly RunRow[]): CompiledQuery {
    let shape = runInsertShapes.get(rows.length)
    if (!shape) {
      shape = db
        .insertInto('flow_runs')
        .values(rows.map(() => sampleRun()))
        .compile()
      if (runInsertShapes.size < 512) runInsertShapes.set(rows.length, shape)
    }
    return { ...shape, parameters: rows.flatMap((row) => runColumns.map((column) => row[column])) }
  }

  async function writeIn(trx: Transaction<Tables>, writes: RunWrites): Promise<RunFinish[]> {
    // A run that ended before its row was written is inserted ended: one row written once, no update.
    const ends = new Map(writes.finishes.map((f) => [f.runId, f]))
    const born = new Set<string>()
    const inserts = (writes.inserts ?? []).map((row) => {
      const f = ends.get(row.id)
      if (!f) return row
      born.add(row.id)
      return { ...row, status: f.status, error: f.error, finished_at: f.finishedAt, duration_ms: f.durationMs }
    })
    for (const chunk of chunksOf(inserts)) await trx.executeQuery(runInsert(chunk))
    for (const chunk of chunksOf(writes.steps)) await trx.executeQuery(logUpsert(chunk))
    const written: RunFinish[] = []
    for (const f of writes.finishes) {
      if (!born.has(f.runId)) {
        // Parameters in order: status, error, finished_at, duration_ms, id, project_id, the active statuses.
        const result = await trx.executeQuery({
          ...finishShape,
          parameters: [f.status, f.error, f.finishedAt, f.durationMs, f.runId, f.projectId, ...activeRunStatuses],
        })
        // A cancel or a recovery that won keeps its status.
        if (Number(result.numAffectedRows ?? 0) === 0) continue
      }
      written.push(f)
      // Every step was logged as it ended (progress, recovery); log_level decides what stays.
      if (f.keep === 'none') await trx.deleteFrom('flow_step_logs').where('run_id', '=', f.runId).execute()
      if (f.keep === 'errors_only')
        await trx.deleteFrom('flow_step_logs').where('run_id', '=', f.runId).where('status', '!=', 'failed').execute()
    }
    return written
  }

  return {
    /** Inserts a new run row (pending or running). */
    async insertRun(row: RunRow): Promise<void> {
      await runCompiled(db, { ...insertShape, parameters: runColumns.map((column) => row[column]) })
    },

    /** pending → running; false when the run is no longer pending (cancelled, reaped, deleted). */
    async markRunning(projectId: string, runId: string, startedAt: number): Promise<boolean> {
      const rows = await runCompiled(db, {
        ...markRunningShape,
        parameters: ['running', startedAt, runId, projectId, 'pending'],
      })
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
     * Writes a batch in one transaction: new runs, step logs as their steps ended (or began, with effects),
     * then each run's final status (only while it is still active). Answers the run ends that were written.
     */
    write(writes: RunWrites): Promise<RunFinish[]> {
      return db.transaction().execute((trx) => writeIn(trx, writes))
    },

    /** Renews the leases of every active run this instance holds, in one statement. */
    async renewLeases(instanceId: string, until: number): Promise<void> {
      await db
        .updateTable('flow_runs')
        .set({ lease_until: until })
        .where(liveRuns)
        .where('instance_id', '=', instanceId)
        .execute()
    },

    /**
     * Active runs whose lease ran out (or that never had one), in one project or all; with `notOf`, also
     * every active run of another instance (embedded: a process alone knows the earlier one is gone).
     */
    async expired(projectIdOrAll: string | null, now: number, notOf: string | null): Promise<ExpiredRun[]> {
      let q = db
        .selectFrom('flow_runs')
        .select(['id', 'project_id', 'flow_id', 'status', 'instance_id', 'lease_until'])
        .where(liveRuns)
      q = q.where((eb) => {
        const lapsed = [eb('lease_until', '<', now), eb('lease_until', 'is', null)]
        return eb.or(
          notOf === null ? lapsed : [...lapsed, eb('instance_id', '!=', notOf), eb('instance_id', 'is', null)],
        )
      })
      if (projectIdOrAll !== null) q = q.where('project_id', '=', projectIdOrAll)
      return q.orderBy('created_at').limit(1000).execute()
    },

    /** Takes over an expired run for this instance: true only for the one instance whose update found it unchanged. */
    async takeOver(run: ExpiredRun, instanceId: string, until: number): Promise<boolean> {
      let q = db
        .updateTable('flow_runs')
        .set({ instance_id: instanceId, lease_until: until })
        .where('id', '=', run.id)
        .where('status', '=', run.status)
      q = q
        .where('lease_until', run.lease_until === null ? 'is' : '=', run.lease_until)
        .where('instance_id', run.instance_id === null ? 'is' : '=', run.instance_id)
      const result = await q.executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** Puts a taken-over run back to pending (nothing with effects began), forgetting its unfinished step logs. */
    async requeue(projectId: string, runId: string, keepBelow: number): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('flow_step_logs').where('run_id', '=', runId).where('position', '>=', keepBelow).execute()
        await trx
          .updateTable('flow_runs')
          .set({ status: 'pending', started_at: null })
          .where('project_id', '=', projectId)
          .where('id', '=', runId)
          .where('status', 'in', activeRunStatuses)
          .execute()
      })
    },

    /** Ends a taken-over run failed (interrupted), its unfinished step failed with the same error. */
    async interrupt(
      projectId: string,
      runId: string,
      error: string,
      position: number | null,
      now: number,
    ): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const ended = await trx
          .updateTable('flow_runs')
          .set((eb) => ({
            status: 'failed',
            error,
            finished_at: now,
            duration_ms: eb(eb.val(now), '-', eb.fn.coalesce('started_at', 'created_at')).$castTo<number>(),
          }))
          .where('project_id', '=', projectId)
          .where('id', '=', runId)
          .where('status', 'in', activeRunStatuses)
          .executeTakeFirst()
        if (Number(ended.numUpdatedRows) === 0) return false
        if (position !== null)
          await trx
            .updateTable('flow_step_logs')
            .set({ status: 'failed', error })
            .where('run_id', '=', runId)
            .where('position', '=', position)
            .execute()
        return true
      })
    },

    /** Pending runs of the project, counted up to `atMost` (the backlog quota). */
    async pendingCount(projectId: string, atMost: number): Promise<number> {
      const row = await db
        .selectFrom((eb) =>
          eb
            .selectFrom('flow_runs')
            .select('id')
            .where('project_id', '=', projectId)
            .where(liveRuns)
            .where('status', '=', 'pending')
            .limit(atMost)
            .as('p'),
        )
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },

    async byId(projectId: string, runId: string): Promise<RunRow | undefined> {
      return db
        .selectFrom('flow_runs')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', runId)
        .executeTakeFirst()
    },

    /** A page of the project's runs, newest first, with the total matching. */
    async list(
      projectId: string,
      query: { page: number; limit: number; status?: RunStatus; flowId?: string },
    ): Promise<{ rows: RunRow[]; total: number }> {
      let base = db.selectFrom('flow_runs').where('project_id', '=', projectId)
      if (query.status) base = base.where('status', '=', query.status)
      if (query.flowId) base = base.where('flow_id', '=', query.flowId)
      const [rows, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(query.limit)
          .offset((query.page - 1) * query.limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ])
      return { rows, total: Number(count.n) }
    },

    async stepLogs(projectId: string, runId: string): Promise<StepLogRow[]> {
      return db
        .selectFrom('flow_step_logs')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('run_id', '=', runId)
        .orderBy('position')
        .execute()
    },

    /** Deletes a run and its step logs; false when there was none. */
    async delete(projectId: string, runId: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('flow_step_logs').where('project_id', '=', projectId).where('run_id', '=', runId).execute()
        const result = await trx
          .deleteFrom('flow_runs')
          .where('project_id', '=', projectId)
          .where('id', '=', runId)
          .executeTakeFirst()
        return Number(result.numDeletedRows) > 0
      })
    },

    /** Ends a pending or running run (cancel); false when it is missing or already terminal. */
    async endActive(
      projectId: string,
      runId: string,
      status: RunStatus,
      error: string,
      finishedAt: number,
    ): Promise<boolean> {
      const result = await db
        .updateTable('flow_runs')
        .set((eb) => ({
          status,
          error,
          finished_at: finishedAt,
          duration_ms: eb(eb.val(finishedAt), '-', eb.fn.coalesce('started_at', 'created_at')).$castTo<number>(),
        }))
        .where('project_id', '=', projectId)
        .where('id', '=', runId)
        .where('status', 'in', activeRunStatuses)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** Pending and running runs of every project by status (metrics): the partial index flow_runs_live alone. */
    async countActiveAcrossProjects(): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('flow_runs')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .where(liveRuns)
        .groupBy('status')
        .execute()
      return Object.fromEntries(rows.map((r) => [String(r.status), Number(r.n)]))
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
