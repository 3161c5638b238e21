import { z } from 'zod'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { RunOutcome, RunStatus, TriggerInput } from '../model.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { flowForCall } from './flow-for-call.js'

/** Sub-flow nesting (automation spec "Limits"): a top run is depth 0; its sub-flows may go 8 levels deep. */
export const maxSubFlowDepth = 8

/** What the trigger_flow operation knows when it starts a sub-flow. */
export interface SubFlowCall {
  readonly projectId: string
  /** The flow to start: an active another_flow flow of the same project. */
  readonly flowId: string
  /** The run starting it: its id, flow, depth (ctx.run) and chain (`$trigger.chain` of that run; absent for a top run). */
  readonly parent: {
    readonly runId: string
    readonly flowId: string
    readonly depth: number
    readonly chain?: readonly string[]
  }
  /** `$trigger.body` of the sub-flow's run. */
  readonly body: unknown
  /** Whom the parent run acts as: the sub-run's triggering user. */
  readonly initiator: Principal | null
  /** true: run it now and resolve with its outcome; false: start it in the background. */
  readonly wait: boolean
  /** The parent run's signal: an awaited sub-run is cancelled when it aborts (the parent timed out or was cancelled). */
  readonly signal?: AbortSignal
}

export type SubFlowResult = { readonly runId: string; readonly status: RunStatus; readonly outcome: RunOutcome | null }

/**
 * Starts an another_flow flow from a trigger_flow step, after two checks made before anything runs: the
 * nesting stays within 8 levels (limit_exceeded) and the flow is not already running above in this chain
 * (conflict: A → B → A is refused, however long the loop). Throws not_found (no such flow in the project),
 * conflict (not an another_flow flow, not active, a cycle), limit_exceeded, and what RunStarter throws.
 */
export async function startSubFlow(
  deps: Pick<TriggerDeps, 'flows' | 'runs'>,
  call: SubFlowCall,
): Promise<SubFlowResult> {
  const depth = call.parent.depth + 1
  if (depth > maxSubFlowDepth) {
    throw new AppError('limit_exceeded', `Sub-flows nest at most ${maxSubFlowDepth} levels deep`, {
      reason: 'depth',
      limit: maxSubFlowDepth,
      depth,
    })
  }
  const chain = [...(call.parent.chain ?? []), call.parent.flowId]
  if (chain.includes(call.flowId)) {
    throw new AppError(
      'conflict',
      'The flow is already running above this step: a sub-flow may not start a flow of its own chain',
      { reason: 'cycle', flowId: call.flowId, chain: [...chain, call.flowId] },
    )
  }
  const live = flowForCall(
    await deps.flows.byId(call.projectId, call.flowId),
    'another_flow',
    anotherFlowConfig,
    call.flowId,
  )
  const trigger: TriggerInput = {
    type: 'another_flow',
    event: null,
    collection: null,
    method: null,
    body: call.body,
    chain,
  }
  const options = { depth, parentRunId: call.parent.runId }
  if (call.wait) {
    const outcome = await deps.runs.runNow(
      live.flow,
      trigger,
      call.initiator,
      call.signal ? { ...options, signal: call.signal } : options,
    )
    return { runId: outcome.runId, status: outcome.status, outcome }
  }
  const started = await deps.runs.start(live.flow, trigger, call.initiator, options)
  return { runId: started.runId, status: started.status, outcome: null }
}

/** The another_flow trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const anotherFlowConfig = z.object({}).strict()

/** another_flow: no source of its own; runs only through startSubFlow (the trigger_flow operation). */
export const anotherFlow = defineTrigger({
  type: 'another_flow',
  label: 'Another flow',
  blocking: 'parent',
  configSchema: anotherFlowConfig,
  start: () => ({}),
})
