import { busyTicker, type Clock, type Ticker } from '../../../lib/clock.js'
import { newId } from '../../../lib/ids.js'
import { newRunId } from './run-ids.js'
import type { Logger } from '../../../lib/log.js'
import { principals, type Principal } from '../../../lib/principal.js'
import type { RateLimiter } from '../../../lib/ratelimit/index.js'
import type { OperationServices } from '../../operations/index.js'
import { createRunsPerHour } from '../quotas/index.js'
import type { RunQuotas } from './run-limits.js'
import type { FlowForRun, FlowLookup, RunOutcome, RunStarter, RunStatus, StartOptions, TriggerInput } from '../model.js'
import { DelegationRevoked, principalOf, type ActingResolver } from './acting.js'
import { cancelledWith } from './cancel-link.js'
import { claimsFor, type Dispatcher } from './dispatcher.js'
import type { ExecutionResult, Executor } from './executor.js'
import type { RunKeys } from './run-keys.js'
import { createNewRuns } from './new-runs.js'
import { createBacklogCheck, depthOf, runnable } from './run-admission.js'
import { createRunWriter } from './run-writer.js'
import { createRunEnd } from './run-end.js'
import { createRunGate } from './run-gate.js'
import { createStepProgress } from './step-progress.js'
import type { RunsStore } from './runs-store.js'
import { createTakeover, type LocalRun } from './takeover.js'

export { defaultRunLimits, type RunLimits, type RunQuotas } from './run-limits.js'

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
  readonly services: (starter: RunStarter) => OperationServices
  /** Idempotency-Keys of starts. */
  readonly keys: RunKeys
  /** What an operation declares it does (a step that writes is never run twice). */
  readonly effectsOf: (type: string) => 'none' | 'reads' | 'writes'
  /** An active run whose instance renewed its lease this long ago is taken over (2 minutes: the spec's stale). */
  readonly staleAfterMs: number
  /** True when other instances share the runs (Redis): only runs whose lease ran out are theirs to take over. */
  readonly shared: boolean
  /** Background runs executing at once in this instance (run-gate.ts); 256 when not given. */
  readonly maxExecuting?: number
}

// Recovery before an execution runs at most this often per project and instance.
const cleanupEveryMs = 10_000

export type Runner = ReturnType<typeof createRunner>

/** Starts, dispatches, executes and finishes runs; the RunStarter of model.ts. Durable as decision 054 says. */
export function createRunner(deps: RunnerDeps) {
  const { store, executor, dispatcher, flows, clock, log } = deps
  // Whose leases this process renews; a new one per process, so a restart knows the earlier one's runs are not its own.
  const instanceId = newId()
  const leaseMs = deps.staleAfterMs
  const local = new Map<string, LocalRun>()
  /** A run active here from now on: its lease is renewed while it is in `local`. */
  function keep(run: LocalRun): void {
    local.set(run.id, run)
    renewer.wake()
  }
  const lastCleanup = new Map<string, number>()
  const writer = createRunWriter(store, log, flows)
  const { rowOf, refused } = createNewRuns({ store, flows, clock, log, instanceId, leaseMs })
  const assertBacklogRoom = createBacklogCheck(store, clock)
  // A run started here as running whose job another instance executed: nothing of it is left to do here.
  dispatcher.onFreedElsewhere((runId) => local.delete(runId))

  // Runs per hour: one counter per project and clock hour (shared with dry runs and script tests).
  const hourly = createRunsPerHour({
    limiter: deps.limiter,
    clock,
    limits: (projectId) => deps.quotas.limits(projectId),
  })

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

  async function cleanupBeforeExecution(projectId: string): Promise<void> {
    const now = clock.now()
    if (now - (lastCleanup.get(projectId) ?? 0) < cleanupEveryMs) return
    lastCleanup.set(projectId, now)
    await takeover.recover(projectId)
  }

  const takeover = createTakeover({
    store,
    flows,
    dispatcher,
    clock,
    log,
    instanceId,
    leaseMs,
    quotas: deps.quotas,
    shared: deps.shared,
    effectsOf: deps.effectsOf,
    isLocal: (runId) => local.has(runId),
    handle: (job) => handle(job),
  })

  const gate = createRunGate(deps.maxExecuting ?? 256)
  // Each step's log: durably before a step that writes begins, else within a second or with the run's end.
  const progress = createStepProgress({ writer, clock, log })
  const end = createRunEnd({ writer, progress, log })

  /** Executes a run that holds its places, writes its end, frees its places. `parent`: an awaiting parent run's signal, which cancels this one. */
  async function execute(run: LocalRun, parent?: AbortSignal): Promise<ExecutionResult> {
    const linked = parent ? cancelledWith(dispatcher.track(run.id), parent) : null
    const signal = linked ? linked.signal : dispatcher.track(run.id)
    try {
      const result = await executor.execute({
        id: run.id,
        flowId: run.flow.id,
        projectId: run.flow.projectId,
        steps: run.definition.operations,
        trigger: run.trigger,
        options: { ...run.definition.options, timeout_ms: run.timeoutMs },
        // What the run writes carries it, so the runs its events start stand one deeper (depthOf).
        principal: principals.inRun(principalOf(run.acting), { runId: run.id, flowId: run.flow.id, depth: run.depth }),
        user: run.acting.userId ? { id: run.acting.userId, email: run.acting.email } : null,
        dryRun: false,
        depth: run.depth,
        services,
        signal,
        progress: progress.of(run.id, run.flow.projectId),
        resume: run.resume,
      })
      await end.write(run, result)
      dispatcher.untrack(run.id)
      local.delete(run.id)
      return result
    } finally {
      progress.forget(run.id)
      linked?.dispose()
      dispatcher.untrack(run.id)
      local.delete(run.id)
      await dispatcher.release(run.id)
    }
  }

  /** pending → running once it holds its places; a run cancelled meanwhile gives them back. */
  async function begin(run: LocalRun): Promise<void> {
    if (!(await store.markRunning(run.flow.projectId, run.id, clock.now()))) {
      local.delete(run.id)
      await dispatcher.release(run.id)
      return
    }
    run.status = 'running'
    await inTurn(run)
  }

  /** Executes a background run once the gate lets it; a run cancelled or deleted while it waited only frees its places. */
  async function inTurn(run: LocalRun): Promise<void> {
    await gate.run(async () => {
      if (local.get(run.id) !== run) return void (await dispatcher.release(run.id))
      await execute(run)
    })
  }

  /** Executes a run now, or parks it until its places free. */
  async function handle(job: { runId: string; projectId: string }): Promise<void> {
    const run = local.get(job.runId) ?? (await takeover.load(job.runId, job.projectId))
    if (!run) return
    keep(run)
    if (run.status === 'running') return inTurn(run)
    if (await dispatcher.acquire(run.id, run.claims)) return begin(run)
    dispatcher.park(
      run.id,
      run.claims,
      () =>
        void begin(run).catch((err: unknown) => log.error({ err, runId: run.id }, 'a parked flow run failed to start')),
    )
  }

  /** The runs an Idempotency-Key already started: the first call's run, answered again. */
  async function repeated(flow: FlowForRun, runId: string) {
    const row = await store.byId(flow.projectId, runId)
    return {
      runId,
      status: row?.status ?? ('pending' as RunStatus),
      startedAt: new Date(Number(row?.created_at ?? clock.now())).toISOString(),
      repeated: true,
    }
  }

  const starter: RunStarter = {
    async start(flow, trigger, initiator, options: StartOptions = {}) {
      const id = newRunId()
      const key = options.idempotencyKey
      if (key !== undefined) {
        const earlier = await deps.keys.claim(flow.projectId, flow.id, key, id, clock.now())
        if (earlier !== null) return repeated(flow, earlier)
      }
      try {
        return await startRun(id, flow, trigger, initiator, options)
      } catch (err) {
        if (key !== undefined) await deps.keys.release(flow.projectId, flow.id, key, id)
        throw err
      }
    },

    async runNow(flow, trigger, initiator, options = {}): Promise<RunOutcome> {
      // In the caller (a blocking event_filter, an awaited sub-flow): bounded by that request, so it takes
      // no concurrency place; it still counts against runs per hour and is a row like any run.
      const { definition, acting, timeoutMs, depth } = await prepare(
        flow,
        trigger,
        initiator,
        depthOf(initiator, options.depth),
      )
      if (acting instanceof DelegationRevoked) {
        const { id, error } = await refused(
          flow,
          trigger,
          acting,
          depth,
          options.parentRunId ?? initiator?.run?.runId ?? null,
        )
        return { runId: id, status: 'failed', steps: {}, error }
      }
      const id = newRunId()
      const now = clock.now()
      await writer.insert(
        rowOf(id, flow, trigger, acting, 'running', now, depth, options.parentRunId ?? initiator?.run?.runId ?? null, {
          inline: true,
        }),
      )
      const run: LocalRun = {
        id,
        flow,
        definition,
        acting,
        trigger,
        claims: [],
        timeoutMs,
        depth,
        startedAt: now,
        status: 'running',
      }
      keep(run)
      const result = await execute(run, options.signal)
      return { runId: id, status: result.status, steps: result.steps, error: result.error }
    },
  }

  /**
   * A start: the row is written (durable before the caller hears 202; this instance holds its lease) and the
   * run executes here at once, or waits parked for a place. Past the backlog quota nothing is written (429).
   */
  async function startRun(
    id: string,
    flow: FlowForRun,
    trigger: TriggerInput,
    initiator: Principal | null,
    options: StartOptions,
  ) {
    const { definition, limits, acting, timeoutMs, depth } = await prepare(
      flow,
      trigger,
      initiator,
      depthOf(initiator, options.depth),
    )
    const parentRunId = options.parentRunId ?? initiator?.run?.runId ?? null
    if (acting instanceof DelegationRevoked) {
      const { id: refusedId, now } = await refused(flow, trigger, acting, depth, parentRunId)
      return { runId: refusedId, status: 'failed' as const, startedAt: new Date(now).toISOString() }
    }
    const now = clock.now()
    const claims = claimsFor(flow.projectId, flow.id, definition.options.concurrency, limits.maxConcurrentRuns)
    const status: 'running' | 'pending' = (await dispatcher.acquire(id, claims)) ? 'running' : 'pending'
    const run: LocalRun = { id, flow, definition, acting, trigger, claims, timeoutMs, depth, startedAt: now, status }
    const row = rowOf(id, flow, trigger, acting, status, now, depth, parentRunId, { retryOf: options.retryOf })
    if (status === 'running') {
      // It executes at once, while its row waits for the run writer's next batch (one commit for every start,
      // step log and end of that moment); the caller hears 202 once the row is written. A step that writes
      // waits for its own log, queued behind the row, so nothing with effects runs before the row is durable;
      // a run that ends first is written ended in that batch (run-writer.ts).
      keep(run)
      void inTurn(run).catch((err: unknown) => log.error({ err, runId: id }, 'a flow run failed'))
      try {
        await writer.insert(row)
      } catch (err) {
        // Not accepted: stop it (its places free as it stops, or at the gate).
        local.delete(id)
        await dispatcher.cancel(id)
        throw err
      }
      return { runId: id, status, startedAt: new Date(now).toISOString() }
    }
    try {
      await assertBacklogRoom(flow.projectId, limits)
      await writer.insert(row)
      keep(run)
    } catch (err) {
      local.delete(id)
      await dispatcher.release(id)
      throw err
    }
    void handle({ runId: id, projectId: flow.projectId }).catch((err: unknown) =>
      log.error({ err, runId: id }, 'a flow run failed to start'),
    )
    return { runId: id, status, startedAt: new Date(now).toISOString() }
  }

  const services = deps.services(starter)

  // Leases of this instance's active runs, renewed together; and the sweep that takes over others' lapsed ones.
  // Every active run of this instance is in `local`: with none, there is nothing to renew. Alone (no Redis)
  // no other instance can lose runs once start-up took over an earlier process's, so only shared mode sweeps.
  const renewer = busyTicker(
    clock,
    Math.max(1, Math.min(10_000, Math.floor(leaseMs / 4))),
    () => store.renewLeases(instanceId, clock.now() + leaseMs),
    () => local.size > 0,
    {
      onError: (err) => log.warn({ err }, 'renewing flow run leases failed'),
    },
  )
  const sweeper: Ticker | null = deps.shared
    ? clock.every(Math.max(1, Math.min(30_000, Math.floor(leaseMs / 2))), () => takeover.recover(null), {
        onError: (err) => log.warn({ err }, 'taking over lapsed flow runs failed'),
      })
    : null

  return {
    starter,
    /** What operations get as ctx.services (the dry run gives them the same). */
    services,
    recover: takeover.recover,
    instanceId,

    /** Counts a dry run against the project's runs per hour, as a run: 403 quota_exceeded when over it. */
    async countDryRun(projectId: string): Promise<void> {
      await hourly.count(projectId)
    },

    /** The queue job of a run (left by an earlier version, or queued by a lost instance): executes or parks it. */
    handle,

    /** Runs whose execution this instance ended and wrote, by final status, since it started (metrics). */
    endedByStatus: end.byStatus,

    /** Forgets a run this instance keeps (cancelled, deleted). */
    forget(runId: string): void {
      local.delete(runId)
    },

    /**
     * Usage of the run-time quotas, for GET /quotas: the hour's runs from the counter that enforces the
     * quota (run rows would disagree with it: deleted runs, an hour's edge), capped at the limit since
     * refused attempts are counted too; the runs waiting for a place.
     */
    async usage(projectId: string): Promise<{ concurrentRuns: number; runsThisHour: number; pendingRuns: number }> {
      const limits = await deps.quotas.limits(projectId)
      const [concurrentRuns, counted, pendingRuns] = await Promise.all([
        dispatcher.count(`automate:project:${projectId}`),
        hourly.counted(projectId),
        store.pendingCount(projectId, limits.maxPendingRuns),
      ])
      return { concurrentRuns, runsThisHour: Math.min(counted, limits.maxRunsPerHour), pendingRuns }
    },

    /** Waits for pending writes and stops renewing (close); the runs still active are taken over after their lease. */
    async close(): Promise<void> {
      await renewer.stop()
      await sweeper?.stop()
      await progress.close()
      await writer.drain()
    },
  }
}

export type { RunStatus }
