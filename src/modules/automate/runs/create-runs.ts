import type { Kysely } from 'kysely'
import type { Clock } from '../../../lib/clock.js'
import type { Logger } from '../../../lib/log.js'
import type { RouteGuards } from '../../../lib/module.js'
import type { Principal } from '../../../lib/principal.js'
import type { PubSub } from '../../../lib/pubsub/index.js'
import type { JobQueue } from '../../../lib/queue/index.js'
import type { RateLimiter } from '../../../lib/ratelimit/index.js'
import type { Slots } from '../../../lib/slots/index.js'
import type { OperationRegistry, OperationServices } from '../../operations/index.js'
import type { FlowLookup, RunStarter } from '../model.js'
import { createActingResolver, type ActingDeps } from './acting.js'
import type { RunDataAccess } from './run-data.js'
import { createDispatcher } from './dispatcher.js'
import { createExecutor } from './executor.js'
import { runsRoutes } from './routes.js'
import { createRunner, defaultRunLimits, type RunQuotas } from './runner.js'
import { createRunsService } from './runs-service.js'
import { createRunKeys } from './run-keys.js'
import { createRunsStore } from './runs-store.js'
import { createSubFlows } from './sub-flows.js'

/** The operations' services but those the run engine itself gives (trigger_flow's sub-flows, the run counts). */
export type ServicesBeforeRuns = Omit<OperationServices, 'subFlows' | 'runStats'>

export interface RunsDeps {
  readonly systemDb: Kysely<any>
  readonly registry: OperationRegistry
  readonly flows: FlowLookup
  /** The project's run-time limits (the quotas service); the spec's defaults when absent. */
  readonly quotas?: RunQuotas
  readonly access: ActingDeps['access'] & RunDataAccess
  readonly users: ActingDeps['users']
  /** API keys by id: the publisher of a flow published through a key (decision 045). */
  readonly apiKeys: ActingDeps['apiKeys']
  readonly limiter: RateLimiter
  readonly queue: JobQueue
  readonly slots: Slots
  readonly pubsub: PubSub
  readonly clock: Clock
  readonly log: Logger
  /** What operations get as ctx.services (records, files, …), each checking the run's principal; `subFlows` and `runStats` are added here. */
  readonly services: ServicesBeforeRuns
  /** An active run whose instance has not renewed its lease for this long is taken over; 2 minutes (the spec's stale). */
  readonly staleAfterMs?: number
  /** Concurrency leases: a dead instance's places free after this; 30 s. */
  readonly leaseMs?: number
  /** Background runs executing at once in this instance (and jobs of the flow-runs queue): 256. */
  readonly queueConcurrency?: number
}

/**
 * The run engine and the runs API (issue 15 items 5 and 8): runs dispatched through the "flow-runs"
 * queue (job "run" { runId, projectId }; "cleanup" on the hourly tick 0 * * * *), concurrency places
 * across instances, cancels through pub/sub; runs whose instance was lost taken over at start-up, every
 * half lease, before executions and hourly (decision 054).
 */
export async function createRuns(deps: RunsDeps) {
  const { clock, log } = deps
  const store = createRunsStore(deps.systemDb)
  const executor = createExecutor({ registry: deps.registry, clock })
  const dispatcher = await createDispatcher({
    slots: deps.slots,
    pubsub: deps.pubsub,
    clock,
    log,
    leaseMs: deps.leaseMs,
  })
  const quotas = deps.quotas ?? { limits: async () => defaultRunLimits }
  const acting = createActingResolver({ users: deps.users, access: deps.access, apiKeys: deps.apiKeys }, clock)
  const staleAfterMs = deps.staleAfterMs ?? 120_000
  const jobs = await deps.queue.define<{ run: { runId: string; projectId: string }; cleanup: Record<string, never> }>(
    'flow-runs',
    {
      concurrency: deps.queueConcurrency ?? 256,
      handlers: {
        // Left by an earlier version of Plinth: runs are no longer queued (decision 054), but such a job still runs.
        run: (job) => runner.handle(job.data),
        cleanup: async () => {
          await runner.recover(null)
          await keys.prune(clock.now())
        },
      },
    },
  )
  // Operations get the platform's services and sub-flows (trigger_flow), started through this runner.
  // runStats: the runs of a period (system_monthly_summary), for a caller who may read runs.
  const runStats = {
    async between(
      principal: Principal,
      fromMs: number,
      toMs: number,
    ): Promise<{ total: number; byStatus: Record<string, number> }> {
      await deps.access.authorize(principal, 'system/automate:read')
      const byStatus = await store.countByStatusBetween(principal.projectId, fromMs, toMs)
      return { total: Object.values(byStatus).reduce((a, b) => a + b, 0), byStatus }
    },
  }
  const services = (starter: RunStarter): OperationServices => ({
    ...deps.services,
    subFlows: createSubFlows({
      flows: deps.flows,
      runs: starter,
      authorize: (p, permission) => deps.access.authorize(p, permission),
    }),
    runStats,
  })
  const keys = createRunKeys(deps.systemDb)
  const runner = createRunner({
    store,
    executor,
    dispatcher,
    flows: deps.flows,
    quotas,
    limiter: deps.limiter,
    acting,
    clock,
    log,
    services,
    staleAfterMs,
    keys,
    effectsOf: (type) => deps.registry.get(type)?.effects ?? 'writes',
    shared: deps.slots.shared,
    maxExecuting: deps.queueConcurrency,
  })
  await jobs.schedule('runs-cleanup', { pattern: '0 * * * *', job: 'cleanup', data: {} })
  // At start-up: alone (no Redis), every active run is an earlier process's and is taken over now; with
  // Redis other instances may be running theirs, so only runs whose lease lapsed are.
  await runner.recover(null, true)
  const service = createRunsService({
    store,
    runner,
    executor,
    dispatcher,
    flows: deps.flows,
    quotas,
    access: deps.access,
    acting,
    clock,
    services: runner.services,
  })

  return {
    service,
    /** For triggers and trigger_flow. */
    starter: runner.starter,
    /** Figures for /metrics: active runs of every project (shared), runs this instance ended (its own). */
    metrics: {
      activeAcrossProjects: () => store.countActiveAcrossProjects(),
      endedByStatus: runner.endedByStatus,
    },
    /** This process's instance id, which its runs' leases name. */
    instanceId: runner.instanceId,
    /** Usage of the run-time quotas (GET /quotas). */
    usage: runner.usage,
    routers: ({ security }: RouteGuards) => [runsRoutes(service, security)],
    async close(): Promise<void> {
      await runner.close()
      await dispatcher.close()
    },
  }
}

export type Runs = Awaited<ReturnType<typeof createRuns>>
