import type { Principal } from '../../../lib/principal.js'
import type { OperationServices, PreparedConfig, StepLogLine, StepNode } from '../../operations/index.js'
import type { FlowOptions, RunStatus, StepStatus, TriggerInput } from '../model.js'

/** What the executor takes and answers (executor.ts). */

export interface StepRecord {
  /** Order of execution across the run, nested steps included. */
  readonly position: number
  /** `<parent>.<child>` for nested steps. */
  readonly key: string
  readonly type: string
  status: StepStatus
  /** The resolved config (templates applied); null when the step never got that far. */
  input: unknown
  output: unknown
  error: { code: string; message: string; details?: Record<string, unknown> } | null
  readonly logs: StepLogLine[]
  unresolved: PreparedConfig['unresolved']
  attempts: number
  readonly startedAt: number
  durationMs: number
  /** The index of the top-level step it belongs to (itself, or the step it is nested in). */
  readonly top: number
  /** What its operation declares: a step that `writes` is never run twice (decision 054). */
  readonly effects: 'none' | 'reads' | 'writes'
}

export interface RunError {
  readonly code: string
  readonly message: string
  readonly step?: string
  readonly statusCode?: number
  readonly attempts?: number
}

export interface ExecutionResult {
  readonly status: Exclude<RunStatus, 'pending' | 'running'>
  /** Each top-level step's output by key (what `$steps` held at the end). */
  readonly steps: Record<string, unknown>
  readonly error: RunError | null
  readonly records: StepRecord[]
  readonly startedAt: number
  readonly finishedAt: number
  readonly durationMs: number
}

export interface RunToExecute {
  readonly id: string
  readonly flowId: string
  readonly projectId: string
  readonly steps: readonly StepNode[]
  readonly options: Pick<FlowOptions, 'timeout_ms' | 'max_retries' | 'error_handling'>
  readonly trigger: TriggerInput
  readonly principal: Principal
  /** `$user`: the person the run acts for, when there is one. */
  readonly user: { readonly id: string; readonly email: string | null } | null
  readonly dryRun: boolean
  readonly depth: number
  /** Given to operations as `ctx.services`. */
  readonly services: OperationServices
  /** Aborted by a cancel (its reason should be a RunAborted('cancelled')). */
  readonly signal?: AbortSignal
  /** Told of each step as it ends, and awaited before a step that writes runs (so its log is durable first). */
  readonly progress?: StepProgress
  /** Continues a run taken over from a lost instance: its first `from` top-level steps completed with these outputs. */
  readonly resume?: Resume
}

export interface StepProgress {
  began(record: StepRecord): Promise<void>
  ended(record: StepRecord): void
}

export interface Resume {
  readonly from: number
  readonly outputs: Record<string, unknown>
  /** The position the next step log takes (after those kept). */
  readonly nextPosition: number
}

/** The reason a run's signal aborts with; anything else aborting it counts as a cancel. */
export class RunAborted extends Error {
  constructor(
    readonly kind: 'timed_out' | 'cancelled',
    message: string,
  ) {
    super(message)
    this.name = 'RunAborted'
  }
}
