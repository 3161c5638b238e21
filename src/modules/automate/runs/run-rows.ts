import { sql } from 'kysely'
import type { RunStatus, StepStatus } from '../model.js'

/**
 * The rows of `flow_runs` and `flow_step_logs` as the runs store reads and writes them, what one batch of
 * the run writer holds, and the column orders its compiled statements bind.
 */

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
  /** The instance renewing the lease of this active run (decision 054). */
  instance_id: string | null
  /** Until when the lease holds; an active run past it (or null) is taken over by recovery. */
  lease_until: number | null
  /** The run this one retries (POST /runs/:id/retry). */
  retry_of: string | null
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
  /** The step logs kept once the run ends (log_level): all, the failed ones, or none. */
  readonly keep: 'all' | 'errors_only' | 'none'
}

/** One batch of the run writer: new runs, step logs (inserted or replacing the row of their position) and run ends. */
export interface RunWrites {
  /** Rows of runs just accepted (written first: their step logs and ends may be in the same batch). */
  readonly inserts?: readonly RunRow[]
  readonly steps: readonly StepLogRow[]
  readonly finishes: readonly RunFinish[]
}

/** An active run whose lease ran out, as recovery sees it. */
export interface ExpiredRun {
  id: string
  project_id: string
  flow_id: string
  status: RunStatus
  instance_id: string | null
  lease_until: number | null
}

export type Tables = { flow_runs: RunRow; flow_step_logs: StepLogRow }

export const activeRunStatuses = ['pending', 'running'] as const
/**
 * The condition of the partial index `flow_runs_live` (migration 0027), word for word: SQLite reads a
 * partial index only for a query that names its term, and a bound parameter there would make the statement
 * be prepared again on every run.
 */
export const liveRuns = sql<boolean>`status in ('pending', 'running')`
// Rows per multi-row insert at most: 13 parameters a step log (18 a run) stays far below both dialects' limits.
export const insertChunk = 256

export const runColumns = Object.keys(sampleRun()) as (keyof RunRow)[]
export const logColumns = Object.keys(sampleLog()) as (keyof StepLogRow)[]
export const replacedLogColumns = logColumns.filter((c) => c !== 'run_id' && c !== 'position')

/** A step log with every column, in the order the compiled insert binds them (`logColumns`). */
export function sampleLog(): StepLogRow {
  return {
    run_id: '',
    position: 0,
    project_id: '',
    step_key: '',
    type: '',
    status: 'completed',
    input: '',
    output: '',
    error: '',
    logs: '',
    attempts: 1,
    started_at: 0,
    duration_ms: 0,
  }
}

/** A row with every column, in the order the compiled insert binds them (`runColumns`). */
export function sampleRun(): RunRow {
  return {
    id: '',
    project_id: '',
    flow_id: '',
    version: 0,
    status: 'pending',
    trigger_type: '',
    trigger: '',
    acting: '',
    error: null,
    depth: 0,
    parent_run_id: null,
    created_at: 0,
    started_at: null,
    finished_at: null,
    duration_ms: null,
    instance_id: null,
    lease_until: null,
    retry_of: null,
  }
}
