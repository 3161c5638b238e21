import type { Clock } from '../../../lib/clock.js'
import { newRunId } from './run-ids.js'
import type { Logger } from '../../../lib/log.js'
import type { FlowForRun, FlowLookup, RunOutcome, TriggerInput } from '../model.js'
import type { Acting, DelegationRevoked } from './acting.js'
import type { RunRow } from './run-rows.js'
import type { RunsStore } from './runs-store.js'

/**
 * The row a start writes: a run accepted (held by this instance's lease), or one refused at its start,
 * written already failed.
 */
export function createNewRuns(deps: {
  readonly store: Pick<RunsStore, 'insertRun'>
  readonly flows: Pick<FlowLookup, 'countRun'>
  readonly clock: Clock
  readonly log: Logger
  readonly instanceId: string
  readonly leaseMs: number
}) {
  const { store, flows, clock, log, instanceId, leaseMs } = deps

  /** A new run's row, leased to this instance. */
  function rowOf(
    id: string,
    flow: FlowForRun,
    trigger: TriggerInput,
    acting: Acting,
    status: 'pending' | 'running',
    now: number,
    depth: number,
    parentRunId: string | null,
    extra: { inline?: boolean; retryOf?: string } = {},
  ): RunRow {
    return {
      id,
      project_id: flow.projectId,
      flow_id: flow.id,
      version: flow.publishedVersion ?? 0,
      status,
      trigger_type: trigger.type,
      // chain (the flows above a sub-run) is kept so a background sub-run can pass it on (the cycle check).
      trigger: JSON.stringify({
        event: trigger.event,
        collection: trigger.collection,
        method: trigger.method,
        body: trigger.body ?? null,
        ...(trigger.chain ? { chain: trigger.chain } : {}),
      }),
      // inline: run in its caller (runNow), which is gone if its instance is: such a run is never resumed elsewhere.
      acting: JSON.stringify(extra.inline ? { ...acting, inline: true } : acting),
      error: null,
      depth,
      parent_run_id: parentRunId,
      created_at: now,
      started_at: status === 'running' ? now : null,
      finished_at: null,
      duration_ms: null,
      instance_id: instanceId,
      lease_until: now + leaseMs,
      retry_of: extra.retryOf ?? null,
    }
  }

  /** A run refused at its start (its delegation revoked): written failed with the reason, counted as a failed run, never executed. */
  async function refused(
    flow: FlowForRun,
    trigger: TriggerInput,
    revoked: DelegationRevoked,
    depth: number,
    parentRunId: string | null,
  ): Promise<{ id: string; now: number; error: RunOutcome['error'] }> {
    const id = newRunId()
    const now = clock.now()
    const error = { code: revoked.code, message: revoked.message }
    const nobody: Acting = {
      kind: 'anonymous',
      projectId: flow.projectId,
      homeProjectId: flow.projectId,
      userId: null,
      roleId: null,
      roleName: 'public',
      superAdmin: false,
      apiKeyId: null,
      capabilities: null,
      email: null,
      ceiling: null,
    }
    const row = rowOf(id, flow, trigger, nobody, 'running', now, depth, parentRunId)
    await store.insertRun({
      ...row,
      status: 'failed',
      error: JSON.stringify(error),
      started_at: null,
      finished_at: now,
      duration_ms: 0,
      instance_id: null,
      lease_until: null,
    })
    await flows.countRun(flow.projectId, flow.id, { failed: true, atSeconds: Math.floor(now / 1000) })
    log.warn({ flowId: flow.id, projectId: flow.projectId, runId: id }, `flow run refused: ${revoked.message}`)
    return { id, now, error }
  }

  return { rowOf, refused }
}
