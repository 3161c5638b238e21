import { setMaxListeners } from 'node:events'
import type { Clock } from '../../../lib/clock.js'
import { AppError } from '../../../lib/errors.js'
import { valueWeight } from '../../../lib/json-bounds.js'
import type { Principal } from '../../../lib/principal.js'
import { StepError, stepErrorFrom, StopRun, type OperationContext, type OperationRegistry, type PreparedConfig, type StepLogLine, type StepNode } from '../../operations/index.js'
import type { FlowOptions, RunStatus, StepStatus, TriggerInput } from '../model.js'

/**
 * The run engine's core: runs a flow's steps in order with the operations registry, a template context,
 * a clock and an abort signal, and answers the outcome with one record per step. No database: the
 * service writes what this returns (runs-service.ts), the dry run returns it as it is.
 * Rules (docs/automation-runs.md): a step whose `condition` is false is skipped; onError stop fails the
 * run (continue_all: the run goes on and ends failed), continue records the failure and goes on (the run
 * can still complete), retry tries again after `retryConfig`'s delay, fallback makes `fallbackValue` the
 * output (the step completes, its error kept in the record); `stop` ends the run as it says; the timeout
 * and a cancel abort the whole run, delays included; `max_retries` runs the whole flow again after a failure.
 */

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
  readonly services: unknown
  /** Aborted by a cancel (its reason should be a RunAborted('cancelled')). */
  readonly signal?: AbortSignal
}

export interface ExecutorDeps {
  readonly registry: OperationRegistry
  readonly clock: Clock
  /** The run data budget; maxRunDataBytes when absent (tests lower it). */
  readonly maxRunDataBytes?: number
}

/**
 * The most a run keeps of what its steps took in and gave out (their resolved configs and outputs, kept in
 * `$steps` and the step log until the run ends), as an estimate of the heap it takes (lib/json-bounds
 * valueWeight). A step whose input and output would pass it fails `run_data_limit`: a loop of large
 * responses cannot grow one run until the process runs out of memory.
 */
export const maxRunDataBytes = 256 * 1024 * 1024

/** The reason a run's signal aborts with; anything else aborting it counts as a cancel. */
export class RunAborted extends Error {
  constructor(readonly kind: 'timed_out' | 'cancelled', message: string) {
    super(message)
    this.name = 'RunAborted'
  }
}

/** A step failure that ends the run (onError stop, retries exhausted), carried up through nested steps. */
class StepFailed extends Error {
  constructor(readonly error: RunError) {
    super(error.message)
  }
}

export type Executor = ReturnType<typeof createExecutor>

/** Builds the executor once; `execute` runs one flow run and never throws (failures are the outcome). */
export function createExecutor(deps: ExecutorDeps) {
  const { registry, clock } = deps
  const budget = deps.maxRunDataBytes ?? maxRunDataBytes
  // Failures an operation marked not retryable (throw_error): a whole-run retry would only repeat them.
  const deliberate = new WeakSet<RunError>()

  async function execute(run: RunToExecute): Promise<ExecutionResult> {
    const startedAt = clock.now()
    const controller = new AbortController()
    const signal = controller.signal
    // Every step in flight listens on it: a parallel loop keeps up to 50 passes (and their steps) waiting.
    setMaxListeners(1000, signal)
    const cancelTimer = clock.after(run.options.timeout_ms, () =>
      controller.abort(new RunAborted('timed_out', `The run exceeded its timeout of ${run.options.timeout_ms} ms`)),
    )
    const onCancel = () => controller.abort(run.signal!.reason instanceof RunAborted ? run.signal!.reason : new RunAborted('cancelled', 'The run was cancelled'))
    if (run.signal?.aborted) onCancel()
    else run.signal?.addEventListener('abort', onCancel, { once: true })
    try {
      let attempt = 0
      for (;;) {
        attempt++
        const outcome = await attemptRun(run, signal)
        const retry = outcome.status === 'failed' && outcome.retryable && attempt <= run.options.max_retries && !signal.aborted
        if (!retry) {
          const finishedAt = clock.now()
          const error = outcome.error && attempt > 1 ? { ...outcome.error, attempts: attempt } : outcome.error
          return { status: outcome.status, steps: outcome.steps, error, records: outcome.records, startedAt, finishedAt, durationMs: finishedAt - startedAt }
        }
      }
    } finally {
      cancelTimer()
      run.signal?.removeEventListener('abort', onCancel)
    }
  }

  interface AttemptOutcome {
    status: ExecutionResult['status']
    steps: Record<string, unknown>
    error: RunError | null
    records: StepRecord[]
    /** False for a deliberate failure (stop with status error), which a whole-run retry would only repeat. */
    retryable: boolean
  }

  async function attemptRun(run: RunToExecute, signal: AbortSignal): Promise<AttemptOutcome> {
    const records: StepRecord[] = []
    const steps: Record<string, unknown> = {}
    const data: Record<string, unknown> = {
      $trigger: { event: run.trigger.event, collection: run.trigger.collection, method: run.trigger.method, body: run.trigger.body, ...(run.trigger.chain ? { chain: run.trigger.chain } : {}) },
      $steps: steps,
      $user: run.user ? { id: run.user.id, email: run.user.email } : { id: null, email: null },
      $flow: { id: run.flowId },
      $run: { id: run.id },
      $now: new Date(clock.now()).toISOString(),
    }
    const state: RunState = { run, signal, records, failure: null, kept: 0 }
    try {
      await runSequence(state, run.steps, data, steps, '')
    } catch (err) {
      if (err instanceof StopRun) {
        const status = err.status === 'success' ? 'completed' : 'failed'
        const error = status === 'failed' ? { code: 'stopped', message: err.message, step: lastKey(records), statusCode: 400 } : null
        return { status, steps, error, records, retryable: false }
      }
      if (signal.aborted) {
        const reason = signal.reason instanceof RunAborted ? signal.reason : new RunAborted('cancelled', 'The run was cancelled')
        return { status: reason.kind, steps, error: { code: reason.kind, message: reason.message, step: lastKey(records) }, records, retryable: false }
      }
      if (err instanceof StepFailed) return { status: 'failed', steps, error: err.error, records, retryable: !deliberate.has(err.error) }
      const message = err instanceof Error ? err.message : String(err)
      return { status: 'failed', steps, error: { code: 'internal', message }, records, retryable: true }
    }
    // continue_all: every step ran; the first stopping failure still fails the run.
    if (state.failure) return { status: 'failed', steps, error: state.failure, records, retryable: !deliberate.has(state.failure) }
    return { status: 'completed', steps, error: null, records, retryable: false }
  }

  interface RunState {
    readonly run: RunToExecute
    readonly signal: AbortSignal
    readonly records: StepRecord[]
    /** The first failure continue_all carried on past. */
    failure: RunError | null
    /** The estimated bytes of the inputs and outputs the run keeps (maxRunDataBytes). */
    kept: number
  }

  /** Runs steps in order, writing each output to `outputs` (`$steps` at the top, the nested result below). */
  async function runSequence(state: RunState, nodes: readonly StepNode[], data: Record<string, unknown>, outputs: Record<string, unknown>, prefix: string): Promise<void> {
    for (const node of nodes) {
      if (state.signal.aborted) throw state.signal.reason
      data.$now = new Date(clock.now()).toISOString()
      const outcome = await runStep(state, node, data, prefix)
      outputs[node.key] = outcome.output
      // Nested steps read the ones before them in their own list as $steps.<key> (a copy: the parent's $steps is untouched).
      if (data.$steps !== outputs) (data.$steps as Record<string, unknown>)[node.key] = outcome.output
      if (outcome.failure) {
        // Nested steps carry a stopping failure up to their parent step, which fails with it.
        if (prefix !== '' || state.run.options.error_handling !== 'continue_all') throw new StepFailed(outcome.failure)
        state.failure ??= outcome.failure
      }
    }
  }

  async function runStep(state: RunState, node: StepNode, data: Record<string, unknown>, prefix: string): Promise<{ output: unknown; failure: RunError | null }> {
    const { run, signal } = state
    const key = prefix + node.key
    const record: StepRecord = {
      position: state.records.length, key, type: node.type, status: 'running', input: null, output: null, error: null, logs: [], unresolved: [], attempts: 0, startedAt: clock.now(), durationMs: 0,
    }
    state.records.push(record)
    const finish = (status: StepStatus, output: unknown) => {
      record.status = status
      record.output = output
      record.durationMs = clock.now() - record.startedAt
      return output
    }
    const operation = registry.get(node.type)
    if (!operation) {
      record.error = { code: 'unknown_operation', message: `No operation "${node.type}" is registered` }
      finish('failed', null)
      return { output: null, failure: { code: 'unknown_operation', message: record.error.message, step: key } }
    }
    if (node.condition !== undefined && node.condition !== null && !(await registry.evaluateCondition(node.condition, data))) {
      finish('skipped', null)
      return { output: null, failure: null }
    }
    if (run.dryRun && operation.effects === 'writes') {
      record.logs.push({ level: 'info', message: `Not run in a dry run: ${node.type} writes` })
      finish('skipped', null)
      return { output: null, failure: null }
    }
    const ctx: OperationContext = {
      principal: run.principal, services: run.services, clock, signal, data, step: { key: node.key },
      run: { id: run.id, flowId: run.flowId, projectId: run.projectId, dryRun: run.dryRun, depth: run.depth, chain: run.trigger.chain ?? [] },
      log: (line) => void record.logs.push(line),
      runSteps: async (nested, scope, options) => {
        const nestedOutputs: Record<string, unknown> = {}
        const steps = data.$steps as Record<string, unknown>
        // Each call gets its own $steps (parallel loop iterations must not see each other's outputs).
        const nestedData = { ...data, $steps: { ...steps, ...scope } }
        const label = options?.iteration === undefined ? key : `${key}[${options.iteration}]`
        await runSequence(state, nested, nestedData, nestedOutputs, `${label}.`)
        return nestedOutputs
      },
    }
    const retry = node.onError === 'retry' ? (node.retryConfig ?? { maxAttempts: 3, delayMs: 1000, backoff: 'fixed' as const }) : null
    for (;;) {
      record.attempts++
      try {
        const prepared = await registry.prepare(node, data)
        record.input = prepared.config
        record.unresolved = prepared.unresolved
        if (signal.aborted) throw signal.reason
        const output = await untilAborted(operation.run(prepared.config, ctx), signal)
        keep(state, prepared.config, output)
        record.error = null
        return { output: finish('completed', output), failure: null }
      } catch (err) {
        if (err instanceof StopRun) {
          finish(err.status === 'success' ? 'completed' : 'failed', { stopped: true, status: err.status, message: err.message })
          if (err.status === 'error') record.error = { code: 'stopped', message: err.message }
          throw err
        }
        if (signal.aborted) {
          const reason = signal.reason instanceof RunAborted ? signal.reason : null
          record.error = { code: reason?.kind ?? 'cancelled', message: reason?.message ?? 'The run was cancelled' }
          finish('failed', null)
          throw signal.reason
        }
        const typed = asStepError(err)
        record.error = describe(typed)
        if (retry && record.attempts < retry.maxAttempts && !(typed instanceof StepError && !typed.retryable)) {
          const wait = retry.backoff === 'exponential' ? retry.delayMs * 2 ** (record.attempts - 1) : retry.delayMs
          record.logs.push({ level: 'warn', message: `Attempt ${record.attempts} failed (${record.error.code}); retrying in ${wait} ms` })
          try {
            await clock.sleep(wait, signal)
          } catch {
            record.error = { code: signal.reason instanceof RunAborted ? signal.reason.kind : 'cancelled', message: signal.reason instanceof Error ? signal.reason.message : 'The run was aborted' }
            finish('failed', null)
            throw signal.reason
          }
          continue
        }
        if (node.onError === 'fallback') {
          // The step recovered: it completes with the fallback as its output; the error stays on its record.
          return { output: finish('completed', node.fallbackValue ?? null), failure: null }
        }
        finish('failed', null)
        const failure: RunError = { code: record.error.code, message: record.error.message, step: key, ...(typed instanceof StepError ? { statusCode: typed.statusCode } : {}) }
        if (typed instanceof StepError && !typed.retryable) deliberate.add(failure)
        // continue: the failure is tolerated; later steps see it as `$steps.<key>.error`.
        if (node.onError === 'continue') return { output: { error: { code: failure.code, message: failure.message } }, failure: null }
        return { output: null, failure }
      }
    }
  }

  /** Counts a step's input and output against the run's data budget; throws run_data_limit (not retryable) when they would pass it. */
  function keep(state: RunState, input: unknown, output: unknown): void {
    const room = budget - state.kept
    const weight = valueWeight(input, room) + valueWeight(output, room)
    if (weight > room) {
      throw new StepError('run_data_limit', `The run's steps would hold more than ${Math.round(budget / 1024 / 1024)} MB of data; a step should read less (a filter, a limit, fields)`, { limitBytes: budget }, 413, false)
    }
    state.kept += weight
  }

  return { execute }
}

/**
 * A service's refusal (AppError: forbidden, not_found, validation_error …) is a typed step error with the
 * same code, details and status; it is retryable only when trying again can help (408, 429, 5xx).
 */
function asStepError(err: unknown): unknown {
  return err instanceof AppError ? stepErrorFrom(err) : err
}

function describe(err: unknown): { code: string; message: string; details?: Record<string, unknown> } {
  if (err instanceof StepError) return { code: err.code, message: err.message, ...(Object.keys(err.details).length > 0 ? { details: err.details } : {}) }
  return { code: 'step_failed', message: err instanceof Error ? err.message : String(err) }
}

function lastKey(records: readonly StepRecord[]): string | undefined {
  return records[records.length - 1]?.key
}

/** Settles with `promise`, or rejects with the signal's reason as soon as it aborts (an operation that ignores it still stops the run). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {}) // its own rejection is no longer anyone's concern
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (err) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}
