import type { Clock } from '../../../lib/clock.js'
import { AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { Logger } from '../../../lib/log.js'
import { principals, type Principal } from '../../../lib/principal.js'
import type { RateLimiter } from '../../../lib/ratelimit/index.js'
import type { SlotClaim } from '../../../lib/slots/index.js'
import { createRunsPerHour, defaultLimits, type Limits } from '../quotas/index.js'
import type { FlowDefinition, FlowForRun, FlowLookup, RunOutcome, RunStarter, RunStatus, TriggerInput } from '../model.js'
import { maxSubFlowDepth } from '../triggers/another-flow.js'
import { DelegationRevoked, principalOf, type Acting, type ActingResolver } from './acting.js'
import { claimsFor, keysFor, type Dispatcher } from './dispatcher.js'
import { RunAborted, type ExecutionResult, type Executor, type StepRecord } from './executor.js'
import { createFinishWriter } from './finish-writer.js'
import { maskCredentials } from '../flows/masking.js'
import type { RunRow, RunsStore, StepLogRow } from './runs-store.js'

/** The run-time quotas (automation spec "Quotas"), as the quotas service gives them. */
export type RunLimits = Pick<Limits, 'maxConcurrentRuns' | 'maxExecutionMs' | 'maxRunsPerHour'>
export interface RunQuotas {
  limits(projectId: string): Promise<RunLimits>
}
export const defaultRunLimits: RunLimits = { maxConcurrentRuns: defaultLimits.maxConcurrentRuns, maxExecutionMs: defaultLimits.maxExecutionMs, maxRunsPerHour: defaultLimits.maxRunsPerHour }

export interface RunnerDeps {
  readonly store: RunsStore
  readonly executor: Executor
  readonly dispatcher: Dispatcher
  readonly flows: FlowLookup
  readonly quotas: RunQuotas
  readonly limiter: RateLimiter
  readonly acting: ActingResolver
  readonly clock: Clock
  readonly log: Logger
  /**
   * What operations get as ctx.services, built once from the runner's own starter (trigger_flow starts
   * sub-runs with it; the runner exists before the services that use it, so nothing is bound late).
   */
  readonly services: (starter: RunStarter) => unknown
  /** Queues the run's job (lib/queue "flow-runs", job "run"). */
  readonly enqueue: (job: { runId: string; projectId: string }) => Promise<void>
  /** Runs older than this while active are orphaned (2 minutes). */
  readonly staleAfterMs: number
}

/** What a run needs to execute, kept in the instance that started it (others rebuild it from the rows). */
interface LocalRun {
  readonly id: string
  readonly flow: FlowForRun
  readonly definition: FlowDefinition
  readonly acting: Acting
  readonly trigger: TriggerInput
  readonly claims: SlotClaim[]
  readonly timeoutMs: number
  readonly depth: number
  readonly startedAt: number
  status: 'pending' | 'running'
}

// Cleanup before an execution runs at most this often per project and instance.
const cleanupEveryMs = 10_000

export type Runner = ReturnType<typeof createRunner>

/** Starts, dispatches, executes and finishes runs; the RunStarter of model.ts. */
export function createRunner(deps: RunnerDeps) {
  const { store, executor, dispatcher, flows, clock, log } = deps
  const local = new Map<string, LocalRun>()
  const lastCleanup = new Map<string, number>()
  const writer = createFinishWriter(store, log, flows)
  // A run started here as running whose job another instance executed: nothing of it is left to do here.
  dispatcher.onFreedElsewhere((runId) => local.delete(runId))

  // Runs per hour: one counter per project and clock hour (shared with dry runs and script tests).
  const hourly = createRunsPerHour({ limiter: deps.limiter, clock, limits: (projectId) => deps.quotas.limits(projectId) })

  function runnable(flow: FlowForRun): FlowDefinition {
    if (flow.status !== 'active' || !flow.published) {
      throw new AppError('conflict', `The flow is ${flow.status}${flow.published ? '' : ' and has no published version'}: only an active flow runs (test the draft with /test)`, { status: flow.status })
    }
    return flow.published
  }

  /**
   * How deep a run stands: a sub-flow's depth is given; a run set off by what another run did (a record it
   * wrote, a file it uploaded) is one deeper than that run. Past 8 nothing starts (limit_exceeded), so a flow
   * writing what triggers it stops instead of burning the project's runs per hour.
   */
  function depthOf(initiator: Principal | null, given: number | undefined): number {
    const depth = given ?? (initiator?.run ? initiator.run.depth + 1 : 0)
    if (depth > maxSubFlowDepth) {
      throw new AppError('limit_exceeded', `Runs caused by runs chain at most ${maxSubFlowDepth} deep: a flow that triggers itself through its own writes stops here`, { reason: 'depth', limit: maxSubFlowDepth, depth })
    }
    return depth
  }

  /** Checks and counts a start; `acting` is the revoked delegation's error instead when the publisher can no longer stand behind the run. */
  async function prepare(flow: FlowForRun, trigger: TriggerInput, initiator: Principal | null, depth: number) {
    const definition = runnable(flow)
    const limits = await deps.quotas.limits(flow.projectId)
    await hourly.count(flow.projectId, limits.maxRunsPerHour)
    await cleanupBeforeExecution(flow.projectId)
    const acting = await deps.acting.resolve(flow, definition.runAs, trigger, initiator).catch((err: unknown) => {
      if (err instanceof DelegationRevoked) return err
      throw err
    })
    const timeoutMs = Math.min(definition.options.timeout_ms, limits.maxExecutionMs)
    return { definition, limits, acting, timeoutMs, depth }
  }

  /** A run refused at its start (its delegation revoked): written failed with the reason, counted as a failed run, never executed. */
  async function refused(flow: FlowForRun, trigger: TriggerInput, revoked: DelegationRevoked, depth: number, parentRunId: string | null): Promise<{ id: string; now: number; error: RunOutcome['error'] }> {
    const id = newId()
    const now = clock.now()
    const error = { code: revoked.code, message: revoked.message }
    const nobody: Acting = { kind: 'anonymous', projectId: flow.projectId, homeProjectId: flow.projectId, userId: null, roleId: null, roleName: 'public', superAdmin: false, apiKeyId: null, capabilities: null, email: null, ceiling: null }
    const row = rowOf(id, flow, trigger, nobody, 'running', now, depth, parentRunId)
    await store.insertRun({ ...row, status: 'failed', error: JSON.stringify(error), started_at: null, finished_at: now, duration_ms: 0 })
    await flows.countRun(flow.projectId, flow.id, { failed: true, atSeconds: Math.floor(now / 1000) })
    log.warn({ flowId: flow.id, projectId: flow.projectId, runId: id }, `flow run refused: ${revoked.message}`)
    return { id, now, error }
  }

  function rowOf(id: string, flow: FlowForRun, trigger: TriggerInput, acting: Acting, status: 'pending' | 'running', now: number, depth: number, parentRunId: string | null): RunRow {
    return {
      id, project_id: flow.projectId, flow_id: flow.id, version: flow.publishedVersion ?? 0, status, trigger_type: trigger.type,
      // chain (the flows above a sub-run) is kept so a background sub-run can pass it on (the cycle check).
      trigger: JSON.stringify({ event: trigger.event, collection: trigger.collection, method: trigger.method, body: trigger.body ?? null, ...(trigger.chain ? { chain: trigger.chain } : {}) }), acting: JSON.stringify(acting),
      error: null, depth, parent_run_id: parentRunId, created_at: now, started_at: status === 'running' ? now : null, finished_at: null, duration_ms: null,
    }
  }

  async function cleanupBeforeExecution(projectId: string): Promise<void> {
    const now = clock.now()
    if (now - (lastCleanup.get(projectId) ?? 0) < cleanupEveryMs) return
    lastCleanup.set(projectId, now)
    await reap(projectId)
  }

  /** Fails stale active runs (one project, or all with null), frees their places and stops them wherever they run. */
  async function reap(projectId: string | null, cutoff = clock.now() - deps.staleAfterMs): Promise<number> {
    const now = clock.now()
    const error = JSON.stringify({ code: 'orphaned', message: `The run was still active after ${Math.round(deps.staleAfterMs / 1000)} s; its instance stopped or lost it` })
    const reaped = await store.reapStale(projectId, cutoff, error, now)
    for (const run of reaped) {
      await dispatcher.release(run.id, keysFor(run.project_id, run.flow_id))
      await dispatcher.cancel(run.id)
      await flows.countRun(run.project_id, run.flow_id, { failed: true, atSeconds: Math.floor(now / 1000) })
    }
    if (reaped.length > 0) log.warn({ reaped: reaped.length }, 'orphaned flow runs failed')
    return reaped.length
  }

  /** Executes a run that holds its places, writes its end, frees its places. `parent`: an awaiting parent run's signal, which cancels this one. */
  async function execute(run: LocalRun, parent?: AbortSignal): Promise<ExecutionResult> {
    const linked = parent ? cancelledWith(dispatcher.track(run.id), parent) : null
    const signal = linked ? linked.signal : dispatcher.track(run.id)
    try {
      const result = await executor.execute({
        id: run.id, flowId: run.flow.id, projectId: run.flow.projectId, steps: run.definition.operations, trigger: run.trigger,
        options: { ...run.definition.options, timeout_ms: run.timeoutMs },
        // What the run writes carries it, so the runs its events start stand one deeper (depthOf).
        principal: principals.inRun(principalOf(run.acting), { runId: run.id, flowId: run.flow.id, depth: run.depth }),
        user: run.acting.userId ? { id: run.acting.userId, email: run.acting.email } : null, dryRun: false, depth: run.depth, services, signal,
      })
      await writer.write({
        projectId: run.flow.projectId, flowId: run.flow.id, runId: run.id, status: result.status, error: result.error ? JSON.stringify(result.error) : null,
        finishedAt: result.finishedAt, durationMs: Math.max(0, result.finishedAt - run.startedAt), stepLogs: stepLogRows(run, result.records),
      })
      dispatcher.untrack(run.id)
      local.delete(run.id)
      return result
    } finally {
      linked?.dispose()
      dispatcher.untrack(run.id)
      local.delete(run.id)
      await dispatcher.release(run.id)
    }
  }

  function stepLogRows(run: LocalRun, records: readonly StepRecord[]): StepLogRow[] {
    const level = run.definition.options.log_level
    if (level === 'none') return []
    const kept = level === 'errors_only' ? records.filter((r) => r.status === 'failed') : records
    return kept.map((r) => ({
      run_id: run.id, position: r.position, project_id: run.flow.projectId, step_key: r.key, type: r.type, status: r.status,
      input: r.input === null ? null : JSON.stringify(maskedInput(r.input, r.type)), output: r.output === undefined ? null : JSON.stringify(r.output),
      error: r.error ? JSON.stringify(r.error) : null, logs: r.logs.length > 0 || r.unresolved.length > 0 ? JSON.stringify({ lines: r.logs, unresolved: r.unresolved }) : null,
      attempts: r.attempts, started_at: r.startedAt, duration_ms: r.durationMs,
    }))
  }

  /** A step's resolved config with its credentials masked (flows/masking.ts: the operation's credential paths, Authorization headers). */
  function maskedInput(input: unknown, type: string): unknown {
    return input !== null && typeof input === 'object' && !Array.isArray(input) ? maskCredentials(input as Record<string, unknown>, type) : input
  }

  /** pending → running once it holds its places; a run cancelled meanwhile gives them back. */
  async function begin(run: LocalRun): Promise<void> {
    if (!(await store.markRunning(run.flow.projectId, run.id, clock.now()))) {
      local.delete(run.id)
      await dispatcher.release(run.id)
      return
    }
    run.status = 'running'
    await execute(run)
  }

  /** Rebuilds a run another instance started, from its row and the flow. Null when there is nothing to run. */
  async function load(runId: string, projectId: string): Promise<LocalRun | null> {
    const row = await store.byId(projectId, runId)
    if (!row || (row.status !== 'pending' && row.status !== 'running')) return null
    if (row.status === 'running' && !(await store.claimRunning(projectId, runId, clock.now()))) return null
    const flow = await flows.byId(projectId, row.flow_id)
    // The version the run was started on, as the instance that started it would run it (a publish since
    // then does not change a run already made).
    const definition = !flow ? null : flow.publishedVersion === row.version ? flow.published : await flows.version(projectId, flow.id, row.version)
    if (!flow || !definition) {
      await store.endActive(projectId, runId, 'failed', JSON.stringify({ code: 'flow_unavailable', message: 'The flow or the version the run was started on is gone' }), clock.now())
      return null
    }
    const limits = await deps.quotas.limits(projectId)
    const trigger = JSON.parse(row.trigger) as Omit<TriggerInput, 'type'>
    const run: LocalRun = {
      id: runId, flow, definition, acting: JSON.parse(row.acting) as Acting, trigger: { ...trigger, type: row.trigger_type as TriggerInput['type'] },
      claims: claimsFor(projectId, flow.id, definition.options.concurrency, limits.maxConcurrentRuns), timeoutMs: Math.min(definition.options.timeout_ms, limits.maxExecutionMs),
      depth: row.depth, startedAt: row.created_at, status: row.status,
    }
    // Started as running elsewhere: its places were taken there under its id; this instance now holds them.
    if (run.status === 'running') dispatcher.adopt(run.id, run.claims)
    return run
  }

  const starter: RunStarter = {
    async start(flow, trigger, initiator, options = {}) {
      const { definition, limits, acting, timeoutMs, depth } = await prepare(flow, trigger, initiator, depthOf(initiator, options.depth))
      if (acting instanceof DelegationRevoked) {
        const { id, now } = await refused(flow, trigger, acting, depth, options.parentRunId ?? initiator?.run?.runId ?? null)
        return { runId: id, status: 'failed', startedAt: new Date(now).toISOString() }
      }
      const id = newId()
      const now = clock.now()
      const claims = claimsFor(flow.projectId, flow.id, definition.options.concurrency, limits.maxConcurrentRuns)
      const status = (await dispatcher.acquire(id, claims)) ? 'running' : 'pending'
      const run: LocalRun = { id, flow, definition, acting, trigger, claims, timeoutMs, depth, startedAt: now, status }
      try {
        await store.insertRun(rowOf(id, flow, trigger, acting, status, now, depth, options.parentRunId ?? initiator?.run?.runId ?? null))
        local.set(id, run)
        await deps.enqueue({ runId: id, projectId: flow.projectId })
      } catch (err) {
        local.delete(id)
        await dispatcher.release(id)
        throw err
      }
      return { runId: id, status, startedAt: new Date(now).toISOString() }
    },

    async runNow(flow, trigger, initiator, options = {}): Promise<RunOutcome> {
      // In the caller (a blocking event_filter, an awaited sub-flow): bounded by that request, so it takes
      // no concurrency place; it still counts against runs per hour and is a row like any run.
      const { definition, acting, timeoutMs, depth } = await prepare(flow, trigger, initiator, depthOf(initiator, options.depth))
      if (acting instanceof DelegationRevoked) {
        const { id, error } = await refused(flow, trigger, acting, depth, options.parentRunId ?? initiator?.run?.runId ?? null)
        return { runId: id, status: 'failed', steps: {}, error }
      }
      const id = newId()
      const now = clock.now()
      await store.insertRun(rowOf(id, flow, trigger, acting, 'running', now, depth, options.parentRunId ?? initiator?.run?.runId ?? null))
      const run: LocalRun = { id, flow, definition, acting, trigger, claims: [], timeoutMs, depth, startedAt: now, status: 'running' }
      const result = await execute(run, options.signal)
      return { runId: id, status: result.status, steps: result.steps, error: result.error }
    },
  }

  const services = deps.services(starter)

  return {
    starter,
    /** What operations get as ctx.services (the dry run gives them the same). */
    services,
    reap,

    /** Counts a dry run against the project's runs per hour, as a run: 403 quota_exceeded when over it. */
    async countDryRun(projectId: string): Promise<void> {
      await hourly.count(projectId)
    },

    /** The queue job of a run: executes it, or parks it until its places free. */
    async handle(job: { runId: string; projectId: string }): Promise<void> {
      const run = local.get(job.runId) ?? (await load(job.runId, job.projectId))
      if (!run) return
      local.set(run.id, run)
      if (run.status === 'running') {
        await execute(run)
        return
      }
      if (await dispatcher.acquire(run.id, run.claims)) return begin(run)
      dispatcher.park(run.id, run.claims, () => void begin(run).catch((err: unknown) => log.error({ err, runId: run.id }, 'a parked flow run failed to start')))
    },

    /** Forgets a run this instance keeps (cancelled, deleted). */
    forget(runId: string): void {
      local.delete(runId)
    },

    /**
     * Usage of the run-time quotas, for GET /quotas: the hour's runs from the counter that enforces the
     * quota (run rows would disagree with it: deleted runs, an hour's edge), capped at the limit since
     * refused attempts are counted too.
     */
    async usage(projectId: string): Promise<{ concurrentRuns: number; runsThisHour: number }> {
      const [concurrentRuns, counted, limits] = await Promise.all([dispatcher.count(`automate:project:${projectId}`), hourly.counted(projectId), deps.quotas.limits(projectId)])
      return { concurrentRuns, runsThisHour: Math.min(counted, limits.maxRunsPerHour) }
    },

    /** Waits for pending end-of-run writes (close). */
    flush: () => writer.drain(),
  }
}

/**
 * A signal aborted with `own`'s reason, or as cancelled when `parent` aborts (the awaiting parent run
 * stopped); `dispose` stops listening to the parent (a loop may await thousands of sub-runs in one run).
 */
function cancelledWith(own: AbortSignal, parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController()
  const fromOwn = () => controller.abort(own.reason)
  const fromParent = () => controller.abort(new RunAborted('cancelled', 'The run that started this sub-flow stopped (it timed out or was cancelled)'))
  if (own.aborted) fromOwn()
  else if (parent.aborted) fromParent()
  own.addEventListener('abort', fromOwn, { once: true })
  parent.addEventListener('abort', fromParent, { once: true })
  return {
    signal: controller.signal,
    dispose() {
      own.removeEventListener('abort', fromOwn)
      parent.removeEventListener('abort', fromParent)
    },
  }
}

export type { RunStatus }
