import type { Clock } from '../../../lib/clock.js'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { FlowDefinition, FlowForRun } from '../model.js'
import { maxSubFlowDepth } from '../triggers/another-flow.js'
import type { RunLimits } from './run-limits.js'
import type { RunsStore } from './runs-store.js'

/** What a start must pass before its run is written: an active published flow, the depth, the backlog quota. */

/** The published definition of a flow that may run; 409 conflict for a draft, paused or unpublished flow. */
export function runnable(flow: FlowForRun): FlowDefinition {
  if (flow.status !== 'active' || !flow.published) {
    throw new AppError(
      'conflict',
      `The flow is ${flow.status}${flow.published ? '' : ' and has no published version'}: only an active flow runs (test the draft with /test)`,
      { status: flow.status },
    )
  }
  return flow.published
}

/**
 * How deep a run stands: a sub-flow's depth is given; a run set off by what another run did (a record it
 * wrote, a file it uploaded) is one deeper than that run. Past 8 nothing starts (limit_exceeded), so a flow
 * writing what triggers it stops instead of burning the project's runs per hour.
 */
export function depthOf(initiator: Principal | null, given: number | undefined): number {
  const depth = given ?? (initiator?.run ? initiator.run.depth + 1 : 0)
  if (depth > maxSubFlowDepth) {
    throw new AppError(
      'limit_exceeded',
      `Runs caused by runs chain at most ${maxSubFlowDepth} deep: a flow that triggers itself through its own writes stops here`,
      { reason: 'depth', limit: maxSubFlowDepth, depth },
    )
  }
  return depth
}

// Counting pending rows on every waiting start costs a scan as long as the backlog: a count at most a
// second old, plus the starts made here since, answers while it is below the limit; at the limit the
// rows are counted again, so a refusal is always exact (other instances' starts may overshoot it for a second).
/** The backlog quota (maxPendingRuns): 429 too_many_requests with Retry-After once that many runs wait. */
export function createBacklogCheck(store: Pick<RunsStore, 'pendingCount'>, clock: Clock) {
  const backlog = new Map<string, { at: number; pending: number }>()
  return async function assertBacklogRoom(projectId: string, limits: RunLimits): Promise<void> {
    const now = clock.now()
    const known = backlog.get(projectId)
    if (known && now - known.at < 1000 && known.pending + 1 < limits.maxPendingRuns) return void known.pending++
    const pending = await store.pendingCount(projectId, limits.maxPendingRuns)
    backlog.set(projectId, { at: now, pending: pending + 1 })
    if (pending < limits.maxPendingRuns) return
    // A place frees within one execution's time at the latest.
    const retryAfter = String(Math.max(1, Math.ceil(limits.maxExecutionMs / 1000)))
    throw new AppError(
      'too_many_requests',
      `The project has ${pending} runs waiting for a concurrency place (maxPendingRuns ${limits.maxPendingRuns}); try again later`,
      { quota: 'maxPendingRuns', limit: limits.maxPendingRuns, usage: pending },
      { headers: { 'Retry-After': retryAfter } },
    )
  }
}
