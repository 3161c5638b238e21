import { z } from 'zod'
import type { Job } from '../../../lib/queue/index.js'
import type { FlowForRun, TriggerInput } from '../model.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { liveFlow } from './match.js'

/** The queue of every schedule flow's ticks: one repeatable schedule per flow, `flow:<flowId>`. */
export const scheduleQueue = 'flow-schedules'
export type ScheduleJobs = { fire: { projectId: string; flowId: string } }

/** The id of a flow's schedule in the queue. */
export const scheduleIdOf = (flowId: string) => `flow:${flowId}`

/** The schedule trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const scheduleConfig = z
  .object({ cron: z.string().min(1).max(200), timezone: z.string().min(1).max(100).default('UTC') })
  .strict()

/**
 * schedule: the published cron pattern in its IANA time zone, as a repeatable schedule of the queue
 * `flow-schedules` (croner's arithmetic, daylight saving included; docs/queue.md). The queue fires each tick
 * once across instances (Redis) and each tick starts one run, without an initiator: runAs triggering_user
 * falls back to the flow owner (the engine resolves it from the trigger type). Registered when a flow
 * becomes active or its published version changes, removed when it stops being an active schedule flow;
 * every active schedule flow is registered again at start-up (replacing a schedule is idempotent). A tick
 * of a flow that is no longer an active schedule flow removes its schedule and starts nothing.
 */
export const schedule = defineTrigger({
  type: 'schedule',
  label: 'Schedule',
  blocking: false,
  configSchema: scheduleConfig,
  async start(deps) {
    const queue = await deps.queue.define<ScheduleJobs>(scheduleQueue, {
      concurrency: 4,
      handlers: {
        fire: async (job) => {
          if (await fire(deps, job)) await queue.unschedule(scheduleIdOf(job.data.flowId))
        },
      },
    })
    async function deactivate(_projectId: string, flowId: string): Promise<void> {
      await queue.unschedule(scheduleIdOf(flowId))
    }
    async function activate(flow: FlowForRun): Promise<void> {
      const live = liveFlow(flow, 'schedule', scheduleConfig)
      if (!live) return deactivate(flow.projectId, flow.id)
      // Always replaced, never skipped as unchanged: another instance may have removed it meanwhile, and
      // replacing keeps the tick already added (docs/queue.md), so nothing fires twice.
      const { cron, timezone } = live.config
      await queue.schedule(scheduleIdOf(flow.id), {
        pattern: cron,
        timezone,
        job: 'fire',
        data: { projectId: flow.projectId, flowId: flow.id },
      })
    }
    return { activate, deactivate }
  },
})

/** Starts the run of one tick; true when the flow is no longer an active schedule flow (its schedule is stale). */
async function fire(deps: TriggerDeps, job: Job<ScheduleJobs['fire']>): Promise<boolean> {
  const { projectId, flowId } = job.data
  const live = liveFlow(await deps.flows.byId(projectId, flowId), 'schedule', scheduleConfig)
  if (!live) return true
  const tick = job.tick ?? deps.clock.now()
  const trigger: TriggerInput = {
    type: 'schedule',
    event: null,
    collection: null,
    method: null,
    body: { scheduledAt: new Date(tick).toISOString(), cron: live.config.cron, timezone: live.config.timezone },
  }
  try {
    await deps.runs.start(live.flow, trigger, null)
  } catch (err) {
    // A tick is not retried (the next one comes); a quota or a race with deactivation is logged.
    deps.log.warn({ err, projectId, flowId, tick }, 'scheduled flow did not start')
  }
  return false
}
