import type { Clock } from '../../../lib/clock.js'
import type { Logger } from '../../../lib/log.js'
import type { SlotClaim } from '../../../lib/slots/index.js'
import type { FlowDefinition, FlowForRun, FlowLookup, TriggerInput } from '../model.js'
import type { Acting } from './acting.js'
import { claimsFor, keysFor, type Dispatcher } from './dispatcher.js'
import type { Resume } from './executor.js'
import { recoveryOf } from './recovery.js'
import type { ExpiredRun, RunRow } from './run-rows.js'
import type { RunsStore } from './runs-store.js'
import type { RunQuotas } from './run-limits.js'

/** What a run needs to execute, kept in the instance that started it (others rebuild it from the rows). */
export interface LocalRun {
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
  /** Set for a run taken over from a lost instance: where it goes on. */
  readonly resume?: Resume
}

export interface TakeoverDeps {
  readonly store: RunsStore
  readonly flows: FlowLookup
  readonly dispatcher: Dispatcher
  readonly quotas: RunQuotas
  readonly clock: Clock
  readonly log: Logger
  readonly instanceId: string
  readonly leaseMs: number
  /** True when other instances share the runs: only runs whose lease lapsed are taken over. */
  readonly shared: boolean
  readonly effectsOf: (type: string) => 'none' | 'reads' | 'writes'
  /** True for a run this instance executes or keeps parked. */
  readonly isLocal: (runId: string) => boolean
  /** Executes (or parks) a run taken over and queued again. */
  readonly handle: (job: { runId: string; projectId: string }) => Promise<void>
}

/**
 * Runs of instances that were lost (decision 054): found by their lapsed leases, taken over one by one
 * (a conditional update, so two instances never take the same run), and settled from the step logs they
 * left: queued again, resumed after their last completed step, or ended `interrupted`.
 */
export function createTakeover(deps: TakeoverDeps) {
  const { store, flows, dispatcher, clock, log, leaseMs, instanceId } = deps

  /** The definition a run was started on (a publish since does not change a run already made). */
  async function definitionOf(row: RunRow): Promise<FlowDefinition | null> {
    const flow = await flows.byId(row.project_id, row.flow_id)
    if (!flow) return null
    return flow.publishedVersion === row.version ? flow.published : flows.version(row.project_id, flow.id, row.version)
  }

  async function settle(run: ExpiredRun, now: number): Promise<void> {
    // Its places were held by the lost instance (they also free when their lease ends).
    await dispatcher.release(run.id, keysFor(run.project_id, run.flow_id))
    if (run.status === 'running') {
      const row = await store.byId(run.project_id, run.id)
      const definition = row && (await definitionOf(row))
      const inline = row ? (JSON.parse(row.acting) as { inline?: boolean }).inline === true : false
      const decision =
        definition && !inline
          ? recoveryOf(await store.stepLogs(run.project_id, run.id), definition.operations, deps.effectsOf)
          : null
      if (decision?.kind !== 'resume') {
        const step = decision?.kind === 'interrupted' ? decision.step : null
        const lost =
          run.lease_until === null
            ? 'before leases existed'
            : `last heard from at ${new Date(Number(run.lease_until) - leaseMs).toISOString()}`
        const why = step
          ? `during step "${step}", which writes and may have written`
          : inline
            ? 'while its caller waited for it'
            : 'and its flow version is gone'
        const message = `The instance running it (${run.instance_id ?? 'unknown'}) was lost (${lost}) ${why}; retry the run to start it again`
        const error = JSON.stringify({
          code: 'interrupted',
          message,
          ...(step ? { step } : {}),
          instance: run.instance_id,
        })
        if (
          await store.interrupt(
            run.project_id,
            run.id,
            error,
            decision?.kind === 'interrupted' ? decision.position : null,
            now,
          )
        ) {
          await flows.countRun(run.project_id, run.flow_id, { failed: true, atSeconds: Math.floor(now / 1000) })
          log.warn(
            { projectId: run.project_id, flowId: run.flow_id, runId: run.id, step },
            `flow run interrupted: ${message}`,
          )
        }
        return
      }
      await store.requeue(run.project_id, run.id, decision.keepBelow)
    }
    // Not awaited: it runs (or waits for a place) like any run; recovery goes on to the next.
    void deps
      .handle({ runId: run.id, projectId: run.project_id })
      .catch((err: unknown) => log.error({ err, runId: run.id }, 'a taken-over flow run failed to start'))
  }

  return {
    /**
     * Takes over the active runs whose instance stopped renewing their leases (one project, or all with
     * null); never judged by age. `atStart` in embedded mode (not shared): every active run of another
     * instance id is an earlier process's, taken at once instead of after its lease. Answers how many it took.
     */
    async recover(projectId: string | null, atStart = false): Promise<number> {
      const now = clock.now()
      const expired = await store.expired(projectId, now, atStart && !deps.shared ? instanceId : null)
      let taken = 0
      for (const run of expired) {
        if (deps.isLocal(run.id) || !(await store.takeOver(run, instanceId, now + leaseMs))) continue
        taken++
        try {
          await settle(run, now)
        } catch (err) {
          log.error({ err, runId: run.id }, 'settling a run taken over from a lost instance failed')
        }
      }
      if (taken > 0) log.warn({ runs: taken, projectId }, 'flow runs of a lost instance taken over')
      return taken
    },

    /** Rebuilds a pending run taken over from a lost instance (or queued by one), from its row, its step logs and the flow. */
    async load(runId: string, projectId: string): Promise<LocalRun | null> {
      const row = await store.byId(projectId, runId)
      if (!row || row.status !== 'pending') return null
      const definition = await definitionOf(row)
      const flow = definition && (await flows.byId(projectId, row.flow_id))
      if (!flow || !definition) {
        await store.endActive(
          projectId,
          runId,
          'failed',
          JSON.stringify({
            code: 'flow_unavailable',
            message: 'The flow or the version the run was started on is gone',
          }),
          clock.now(),
        )
        return null
      }
      const logs = await store.stepLogs(projectId, runId)
      const decision = logs.length > 0 ? recoveryOf(logs, definition.operations, deps.effectsOf) : null
      const limits = await deps.quotas.limits(projectId)
      const trigger = JSON.parse(row.trigger) as Omit<TriggerInput, 'type'>
      return {
        id: runId,
        flow,
        definition,
        acting: JSON.parse(row.acting) as Acting,
        trigger: { ...trigger, type: row.trigger_type as TriggerInput['type'] },
        claims: claimsFor(projectId, flow.id, definition.options.concurrency, limits.maxConcurrentRuns),
        timeoutMs: Math.min(definition.options.timeout_ms, limits.maxExecutionMs),
        depth: row.depth,
        startedAt: row.created_at,
        status: 'pending',
        ...(decision?.kind === 'resume' && decision.resume.from > 0 ? { resume: decision.resume } : {}),
      }
    },
  }
}
