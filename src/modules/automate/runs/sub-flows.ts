import type { Principal } from '../../../lib/principal.js'
import type { FlowLookup, RunStarter } from '../model.js'
import { startSubFlow, type SubFlowCall, type SubFlowResult } from '../triggers/another-flow.js'

export interface SubFlowsDeps {
  readonly flows: FlowLookup
  readonly runs: RunStarter
  /** access.authorize: throws unauthorized or forbidden unless the principal holds the permission. */
  readonly authorize: (principal: Principal, permission: string) => Promise<void>
}

/** What the trigger_flow operation asks for: the flow, its `$trigger.body`, whether to wait, and the run starting it. */
export type SubFlowRequest = Pick<SubFlowCall, 'flowId' | 'body' | 'wait' | 'parent' | 'signal'>

export type SubFlows = ReturnType<typeof createSubFlows>

/**
 * Sub-flows as a service (operations reach it as `ctx.services.subFlows`): the run's principal starts one
 * only when it could start a flow through HTTP, i.e. it holds `system/automate:execute` (what
 * `POST /flows/:flowId/execute` asks), in its own project. Without this a flow acting for an anonymous
 * webhook caller, or under a low role, could start a flow that runs as its owner.
 */
export function createSubFlows(deps: SubFlowsDeps) {
  return {
    /**
     * Starts an another_flow flow of the principal's project as that principal (the sub-run's triggering
     * user). Throws unauthorized, forbidden (no execute permission), not_found, conflict (not an active
     * another_flow flow; a cycle: details.reason 'cycle'), limit_exceeded (deeper than 8: details.reason
     * 'depth'), quota_exceeded.
     */
    async start(principal: Principal, request: SubFlowRequest): Promise<SubFlowResult> {
      await deps.authorize(principal, 'system/automate:execute')
      return startSubFlow(deps, { ...request, projectId: principal.projectId, initiator: principal })
    },
  }
}
