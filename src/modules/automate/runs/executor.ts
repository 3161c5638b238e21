import { setMaxListeners } from 'node:events'
import type { Clock } from '../../../lib/clock.js'
import {
  StepError,
  StopRun,
  type OperationContext,
  type OperationRegistry,
  type StepNode,
} from '../../operations/index.js'
import type { StepStatus } from '../model.js'
import {
  RunAborted,
  type ExecutionResult,
  type Resume,
  type RunError,
  type RunToExecute,
  type StepRecord,
} from './execution.js'
import { chargeRunData, maxRunDataBytes } from './run-data-budget.js'
import { asStepError, describeFailure, lastKey, StepFailed, untilAborted } from './step-failures.js'

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

export type { ExecutionResult, Resume, RunError, RunToExecute, StepProgress, StepRecord } from './execution.js'
export { RunAborted } from './execution.js'

export interface ExecutorDeps {
  readonly registry: OperationRegistry
  readonly clock: Clock
  /** The run data budget; maxRunDataBytes when absent (tests lower it). */
  readonly maxRunDataBytes?: number
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
    const onCancel = () =>
      controller.abort(
        run.signal!.reason instanceof RunAborted
          ? run.signal!.reason
          : new RunAborted('cancelled', 'The run was cancelled'),
      )
    if (run.signal?.aborted) onCancel()
    else run.signal?.addEventListener('abort', onCancel, { once: true })
    try {
      let attempt = 0
      let resume = run.resume ?? null
      const records: StepRecord[] = []
      for (;;) {
        attempt++
        const outcome = await attemptRun(run, signal, resume, records)
        // A flow-level retry goes on from the first step that did not complete, never repeating one that wrote.
        const next =
          outcome.status === 'failed' && outcome.retryable && attempt <= run.options.max_retries && !signal.aborted
            ? resumeAfter(outcome, records)
            : null
        if (!next) {
          const finishedAt = clock.now()
          const error = outcome.error && attempt > 1 ? { ...outcome.error, attempts: attempt } : outcome.error
          return {
            status: outcome.status,
            steps: outcome.steps,
            error,
            records,
            startedAt,
            finishedAt,
            durationMs: finishedAt - startedAt,
          }
        }
        resume = next
      }
    } finally {
      cancelTimer()
      run.signal?.removeEventListener('abort', onCancel)
    }
  }

  /**
   * Where a retry of a failed attempt starts: the first top-level step that did not complete, with the
   * outputs before it. Null (no retry) when a step from there on already wrote: it would run twice.
   */
  function resumeAfter(outcome: AttemptOutcome, records: readonly StepRecord[]): Resume | null {
    const from = outcome.completedTop
    if (records.slice(outcome.firstRecord).some((r) => r.top >= from && r.effects === 'writes' && r.input !== null))
      return null
    return { from, outputs: outcome.steps, nextPosition: 0 }
  }

  interface AttemptOutcome {
    status: ExecutionResult['status']
    steps: Record<string, unknown>
    error: RunError | null
    /** Top-level steps that completed in order, counting those resumed past. */
    completedTop: number
    /** Where this attempt's records start in the run's list. */
    firstRecord: number
    /** False for a deliberate failure (stop with status error), which a whole-run retry would only repeat. */
    retryable: boolean
  }

  async function attemptRun(
    run: RunToExecute,
    signal: AbortSignal,
    resume: Resume | null,
    records: StepRecord[],
  ): Promise<AttemptOutcome> {
    const from = resume?.from ?? 0
    // Outputs of the steps resumed past, in their order (a retry's attempt also holds later keys: dropped).
    const steps: Record<string, unknown> = {}
    for (const node of run.steps.slice(0, from)) steps[node.key] = resume!.outputs[node.key]
    const data: Record<string, unknown> = {
      $trigger: {
        event: run.trigger.event,
        collection: run.trigger.collection,
        method: run.trigger.method,
        body: run.trigger.body,
        ...(run.trigger.chain ? { chain: run.trigger.chain } : {}),
      },
      $steps: steps,
      $user: run.user ? { id: run.user.id, email: run.user.email } : { id: null, email: null },
      $flow: { id: run.flowId },
      $run: { id: run.id },
      $now: new Date(clock.now()).toISOString(),
    }
    const firstRecord = records.length
    const state: RunState = {
      run,
      signal,
      records,
      failure: null,
      kept: 0,
      top: from,
      completedTop: from,
      offset: run.resume?.nextPosition ?? 0,
    }
    const end = (status: ExecutionResult['status'], error: RunError | null, retryable: boolean): AttemptOutcome => ({
      status,
      steps,
      error,
      retryable,
      completedTop: state.completedTop,
      firstRecord,
    })
    try {
      await runSequence(state, run.steps.slice(from), data, steps, '')
    } catch (err) {
      if (err instanceof StopRun) {
        const status = err.status === 'success' ? 'completed' : 'failed'
        return end(
          status,
          status === 'failed'
            ? { code: 'stopped', message: err.message, step: lastKey(records), statusCode: 400 }
            : null,
          false,
        )
      }
      if (signal.aborted) {
        const reason =
          signal.reason instanceof RunAborted ? signal.reason : new RunAborted('cancelled', 'The run was cancelled')
        return end(reason.kind, { code: reason.kind, message: reason.message, step: lastKey(records) }, false)
      }
      if (err instanceof StepFailed) return end('failed', err.error, !deliberate.has(err.error))
      const message = err instanceof Error ? err.message : String(err)
      return end('failed', { code: 'internal', message }, true)
    }
    // continue_all: every step ran; the first stopping failure still fails the run.
    if (state.failure) return end('failed', state.failure, !deliberate.has(state.failure))
    return end('completed', null, false)
  }

  interface RunState {
    readonly run: RunToExecute
    readonly signal: AbortSignal
    readonly records: StepRecord[]
    /** The first failure continue_all carried on past. */
    failure: RunError | null
    /** The estimated bytes of the inputs and outputs the run keeps (maxRunDataBytes). */
    kept: number
    /** The top-level step running now, and how many completed in order before any failed. */
    top: number
    completedTop: number
    /** Added to every step log's position (a resumed run's logs follow those kept). */
    readonly offset: number
  }

  /** Runs steps in order, writing each output to `outputs` (`$steps` at the top, the nested result below). */
  async function runSequence(
    state: RunState,
    nodes: readonly StepNode[],
    data: Record<string, unknown>,
    outputs: Record<string, unknown>,
    prefix: string,
  ): Promise<void> {
    for (const node of nodes) {
      if (state.signal.aborted) throw state.signal.reason
      data.$now = new Date(clock.now()).toISOString()
      const top = prefix === ''
      const first = state.records.length
      const outcome = await runStep(state, node, data, prefix)
      if (top) {
        const status = state.records[first]?.status
        if (!outcome.failure && (status === 'completed' || status === 'skipped') && state.completedTop === state.top)
          state.completedTop++
        state.top++
      }
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

  async function runStep(
    state: RunState,
    node: StepNode,
    data: Record<string, unknown>,
    prefix: string,
  ): Promise<{ output: unknown; failure: RunError | null }> {
    const { run, signal } = state
    const key = prefix + node.key
    const operation = registry.get(node.type)
    const record: StepRecord = {
      position: state.offset + state.records.length,
      key,
      type: node.type,
      status: 'running',
      input: null,
      output: null,
      error: null,
      logs: [],
      unresolved: [],
      attempts: 0,
      startedAt: clock.now(),
      durationMs: 0,
      top: state.top,
      effects: operation?.effects ?? 'none',
    }
    state.records.push(record)
    let told = false
    const finish = (status: StepStatus, output: unknown) => {
      record.status = status
      record.output = output
      record.durationMs = clock.now() - record.startedAt
      run.progress?.ended(record)
      return output
    }
    if (!operation) {
      record.error = { code: 'unknown_operation', message: `No operation "${node.type}" is registered` }
      finish('failed', null)
      return { output: null, failure: { code: 'unknown_operation', message: record.error.message, step: key } }
    }
    if (
      node.condition !== undefined &&
      node.condition !== null &&
      !(await registry.evaluateCondition(node.condition, data))
    ) {
      finish('skipped', null)
      return { output: null, failure: null }
    }
    if (run.dryRun && registry.effectsOf(node) === 'writes') {
      record.logs.push({ level: 'info', message: `Not run in a dry run: ${node.type} writes` })
      finish('skipped', null)
      return { output: null, failure: null }
    }
    const ctx: OperationContext = {
      principal: run.principal,
      services: run.services,
      clock,
      signal,
      data,
      step: { key: node.key },
      run: {
        id: run.id,
        flowId: run.flowId,
        projectId: run.projectId,
        dryRun: run.dryRun,
        depth: run.depth,
        chain: run.trigger.chain ?? [],
      },
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
    const retry =
      node.onError === 'retry'
        ? (node.retryConfig ?? { maxAttempts: 3, delayMs: 1000, backoff: 'fixed' as const })
        : null
    for (;;) {
      record.attempts++
      try {
        const prepared = await registry.prepare(node, data)
        record.input = prepared.config
        record.unresolved = prepared.unresolved
        if (signal.aborted) throw signal.reason
        // Its log is durable before it writes: a lost instance's run is then ended interrupted, never run twice.
        if (run.progress && operation.effects === 'writes' && !told) {
          told = true
          await run.progress.began(record)
          if (signal.aborted) throw signal.reason
        }
        const output = await untilAborted(operation.run(prepared.config, ctx), signal)
        state.kept = chargeRunData(budget, state.kept, prepared.config, output)
        record.error = null
        return { output: finish('completed', output), failure: null }
      } catch (err) {
        if (err instanceof StopRun) {
          finish(err.status === 'success' ? 'completed' : 'failed', {
            stopped: true,
            status: err.status,
            message: err.message,
          })
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
        record.error = describeFailure(typed)
        if (retry && record.attempts < retry.maxAttempts && !(typed instanceof StepError && !typed.retryable)) {
          const wait = retry.backoff === 'exponential' ? retry.delayMs * 2 ** (record.attempts - 1) : retry.delayMs
          record.logs.push({
            level: 'warn',
            message: `Attempt ${record.attempts} failed (${record.error.code}); retrying in ${wait} ms`,
          })
          try {
            await clock.sleep(wait, signal)
          } catch {
            record.error = {
              code: signal.reason instanceof RunAborted ? signal.reason.kind : 'cancelled',
              message: signal.reason instanceof Error ? signal.reason.message : 'The run was aborted',
            }
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
        const failure: RunError = {
          code: record.error.code,
          message: record.error.message,
          step: key,
          ...(typed instanceof StepError ? { statusCode: typed.statusCode } : {}),
        }
        if (typed instanceof StepError && !typed.retryable) deliberate.add(failure)
        // continue: the failure is tolerated; later steps see it as `$steps.<key>.error`.
        if (node.onError === 'continue')
          return { output: { error: { code: failure.code, message: failure.message } }, failure: null }
        return { output: null, failure }
      }
    }
  }

  return { execute }
}
