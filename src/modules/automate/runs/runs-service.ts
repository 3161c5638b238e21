import type { Clock } from '../../../lib/clock.js'
import { AppError } from '../../../lib/errors.js'
import { newRunId } from './run-ids.js'
import type { Principal } from '../../../lib/principal.js'
import type { OperationServices } from '../../operations/index.js'
import type { FlowLookup, RunStatus, TriggerInput } from '../model.js'
import { triggerTypes } from '../triggers/registry.js'
import { publisherRef } from '../run-identity.js'
import { DelegationRevoked, principalOf, type Acting, type ActingResolver } from './acting.js'
import { mayReadRunData, redactedSteps, type RunDataAccess } from './run-data.js'
import { shownInput } from './step-logs.js'
import { keysFor, type Dispatcher } from './dispatcher.js'
import type { Executor } from './executor.js'
import type { RunQuotas, Runner } from './runner.js'
import type { RunRow, StepLogRow } from './run-rows.js'
import type { RunsStore } from './runs-store.js'

export interface RunsServiceDeps {
  readonly store: RunsStore
  readonly runner: Runner
  readonly executor: Executor
  readonly dispatcher: Dispatcher
  readonly flows: FlowLookup
  readonly quotas: RunQuotas
  readonly access: RunDataAccess & { authorize(principal: Principal, permission: string): Promise<void> }
  readonly acting: ActingResolver
  readonly clock: Clock
  readonly services: OperationServices
}

const resource = 'system/automate'

/** What execute and retry answer (202). */
export interface Started {
  readonly runId: string
  readonly flowId: string
  readonly status: RunStatus
  readonly startedAt: string
  /** An Idempotency-Key repeated: this is the first call's run, not a new one. */
  readonly repeated?: true
}

export interface RunView {
  readonly runId: string
  readonly flowId: string
  readonly version: number
  readonly status: RunStatus
  readonly triggerType: string
  readonly error: unknown
  readonly depth: number
  readonly parentRunId: string | null
  /** The run this one retries (POST /runs/:id/retry), else null. */
  readonly retryOf: string | null
  readonly createdAt: string
  readonly startedAt: string | null
  readonly finishedAt: string | null
  readonly durationMs: number | null
}

export interface StepLogView {
  readonly position: number
  readonly key: string
  readonly type: string
  readonly status: string
  readonly input: unknown
  readonly output: unknown
  readonly error: unknown
  readonly logs: unknown[]
  readonly unresolved: unknown[]
  readonly attempts: number
  readonly startedAt: string
  readonly durationMs: number
}

export interface RunListQuery {
  readonly page: number
  readonly limit: number
  readonly status?: RunStatus
  readonly flowId?: string
}

export type RunsService = ReturnType<typeof createRunsService>

/** The runs API (automation spec "Runs", execute and test); every method takes the acting principal first and checks it. */
export function createRunsService(deps: RunsServiceDeps) {
  const { store, runner, dispatcher, flows, access, clock } = deps

  async function flowOf(principal: Principal, flowId: string) {
    const flow = await flows.byId(principal.projectId, flowId)
    if (!flow) throw new AppError('not_found', 'Flow not found')
    return flow
  }

  /**
   * The flow to execute: from the active flows' cache (kept by the flows service, dropped on every change on
   * every instance), so an execution reads no flow row; anything not active is read for its 404 or 409.
   */
  async function executable(principal: Principal, flowId: string) {
    for (const type of triggerTypes) {
      const hit = (await flows.activeByTrigger(principal.projectId, type)).find((f) => f.id === flowId)
      if (hit) return hit
    }
    return flowOf(principal, flowId)
  }

  async function list(principal: Principal, query: RunListQuery) {
    const { rows, total } = await store.list(principal.projectId, query)
    return {
      data: rows.map(runView),
      total,
      page: query.page,
      limit: query.limit,
      hasMore: query.page * query.limit < total,
    }
  }

  return {
    /**
     * Starts a run of the flow's published version in the background (202). Throws unauthorized,
     * forbidden (execute; manage for a system-managed flow), not_found, conflict (a draft or inactive flow), rate_limited (runs per hour).
     */
    async execute(
      principal: Principal,
      flowId: string,
      body: unknown,
      options: { idempotencyKey?: string } = {},
    ): Promise<Started> {
      await access.authorize(principal, `${resource}:execute`)
      const flow = await executable(principal, flowId)
      // A system-managed flow acts as the system: setting one off by hand is for those who manage automation.
      if (flow.system) await access.authorize(principal, `${resource}:manage`)
      const started = await runner.starter.start(flow, executeTrigger(body), principal, options)
      return {
        runId: started.runId,
        flowId,
        status: started.status,
        startedAt: started.startedAt,
        ...(started.repeated ? { repeated: true as const } : {}),
      }
    },

    /**
     * Starts a new run of a failed, cancelled or timed-out run's version with its trigger payload, linked to
     * it (`retryOf`; decision 054), the caller standing as its manual initiator. The flow must still be
     * active. Throws unauthorized, forbidden (execute; manage for a system-managed flow), not_found,
     * conflict (the run is active or completed, the flow is not active, the version is gone) and what a start
     * throws; forbidden too when the caller could not read the run's data (its detail is redacted for them).
     */
    async retry(principal: Principal, runId: string): Promise<Started> {
      await access.authorize(principal, `${resource}:execute`)
      const row = await store.byId(principal.projectId, runId)
      if (!row) throw new AppError('not_found', 'Run not found')
      if (row.status === 'pending' || row.status === 'running' || row.status === 'completed') {
        throw new AppError(
          'conflict',
          `The run is ${row.status}: only a failed, cancelled or timed-out run is retried`,
          { status: row.status },
        )
      }
      // The new run acts as the caller: retrying would show them a trigger payload the old run's detail redacts.
      if (!(await mayReadRunData(access, principal, JSON.parse(row.acting) as Acting)))
        throw new AppError('forbidden', "Only a caller who can read this run's data may retry it")
      const flow = await executable(principal, row.flow_id)
      if (flow.system) await access.authorize(principal, `${resource}:manage`)
      const version = Number(row.version)
      const definition =
        flow.publishedVersion === version ? flow.published : await flows.version(principal.projectId, flow.id, version)
      if (!definition)
        throw new AppError('conflict', `Version ${version} of the flow, which the run was started on, is gone`, {
          version,
        })
      const trigger = {
        ...(JSON.parse(row.trigger) as Omit<TriggerInput, 'type'>),
        type: row.trigger_type as TriggerInput['type'],
      }
      const started = await runner.starter.start(
        { ...flow, published: definition, publishedVersion: version },
        trigger,
        principal,
        { retryOf: row.id },
      )
      return { runId: started.runId, flowId: flow.id, status: started.status, startedAt: started.startedAt }
    },

    /**
     * Dry-runs the flow's draft: nothing is written anywhere (no run row, step logs, counters or events;
     * operations that write are not run). It counts against runs per hour like a run, and acts with the
     * caller standing as its publisher: never beyond the caller, and a delegated draft only for one who
     * could set it (else the trace's error is delegation_revoked). Throws unauthorized, forbidden (execute),
     * not_found, quota_exceeded.
     */
    async test(principal: Principal, flowId: string, body: unknown) {
      await access.authorize(principal, `${resource}:execute`)
      const flow = await flowOf(principal, flowId)
      if (flow.system) await access.authorize(principal, `${resource}:manage`)
      const draft = flow.draft
      await runner.countDryRun(flow.projectId)
      const limits = await deps.quotas.limits(flow.projectId)
      const trigger = executeTrigger(body)
      const runId = newRunId()
      let acting: Acting
      try {
        acting = await deps.acting.resolve(
          { ...flow, publishedBy: publisherRef(principal) },
          draft.runAs,
          trigger,
          principal,
        )
      } catch (err) {
        if (!(err instanceof DelegationRevoked)) throw err
        return {
          runId,
          status: 'failed' as const,
          dryRun: true as const,
          error: { code: err.code, message: err.message },
          steps: [],
          logs: [],
        }
      }
      const result = await deps.executor.execute({
        id: runId,
        flowId: flow.id,
        projectId: flow.projectId,
        steps: draft.operations,
        trigger,
        principal: principalOf(acting),
        options: { ...draft.options, timeout_ms: Math.min(draft.options.timeout_ms, limits.maxExecutionMs) },
        user: acting.userId ? { id: acting.userId, email: acting.email } : null,
        dryRun: true,
        depth: 0,
        services: deps.services,
      })
      return {
        runId,
        status: result.status,
        dryRun: true as const,
        error: result.error,
        steps: result.records.map((r) => ({
          key: r.key,
          type: r.type,
          status: r.status,
          input: shownInput(r),
          output: r.output ?? null,
          durationMs: r.durationMs,
          ...(r.error ? { error: r.error } : {}),
        })),
        logs: result.records.flatMap((r) => [
          ...r.logs.map((line) => ({ step: r.key, ...line })),
          ...r.unresolved.map((u) => ({
            step: r.key,
            level: 'warn' as const,
            message: `${u.tag} at ${u.path} resolved to empty: ${u.message}`,
            data: { reason: u.reason },
          })),
        ]),
      }
    },

    /** The project's runs, newest first. Throws unauthorized, forbidden (read). */
    async list(principal: Principal, query: RunListQuery) {
      await access.authorize(principal, `${resource}:read`)
      return list(principal, query)
    },

    /** The runs of one flow. Throws unauthorized, forbidden (read), not_found. */
    async listForFlow(principal: Principal, flowId: string, query: Omit<RunListQuery, 'flowId'>) {
      await access.authorize(principal, `${resource}:read`)
      await flowOf(principal, flowId)
      return list(principal, { ...query, flowId })
    },

    /**
     * One run with its step logs (credentials in recorded inputs masked). What the run read and wrote (the
     * trigger's body, each step's input, output and log lines) is shown only to a caller who could read it
     * all themselves (run-data.ts); anyone else gets the run with those left out and `redacted: true`.
     * Throws unauthorized, forbidden (read), not_found.
     */
    async get(principal: Principal, runId: string) {
      await access.authorize(principal, `${resource}:read`)
      const row = await store.byId(principal.projectId, runId)
      if (!row) throw new AppError('not_found', 'Run not found')
      const logs = (await store.stepLogs(principal.projectId, runId)).map(stepLogView)
      const acting = JSON.parse(row.acting) as Acting
      const trigger = JSON.parse(row.trigger) as Record<string, unknown>
      const actingAs = {
        kind: acting.kind,
        userId: acting.userId,
        roleId: acting.roleId,
        cappedBy: acting.ceiling
          ? { kind: acting.ceiling.kind, userId: acting.ceiling.userId, roleId: acting.ceiling.roleId }
          : null,
      }
      if (await mayReadRunData(access, principal, acting))
        return { ...runView(row), trigger, actingAs, redacted: false, stepLogs: logs }
      return {
        ...runView(row),
        trigger: { ...trigger, body: null },
        actingAs,
        redacted: true,
        stepLogs: redactedSteps(logs),
      }
    },

    /** Deletes a run and its step logs (an active one is stopped first). Throws unauthorized, forbidden (delete), not_found. */
    async delete(principal: Principal, runId: string): Promise<void> {
      await access.authorize(principal, `${resource}:delete`)
      const row = await store.byId(principal.projectId, runId)
      if (!row || !(await store.delete(principal.projectId, runId))) throw new AppError('not_found', 'Run not found')
      if (row.status === 'pending' || row.status === 'running') await stop(row)
    },

    /**
     * Cancels a pending or running run: its row turns cancelled at once, its concurrency place is freed,
     * and whichever instance runs it stops. Throws unauthorized, forbidden (write), not_found (missing or already finished).
     */
    async cancel(principal: Principal, runId: string): Promise<void> {
      await access.authorize(principal, `${resource}:write`)
      const row = await store.byId(principal.projectId, runId)
      const now = clock.now()
      const error = JSON.stringify({ code: 'cancelled', message: 'The run was cancelled' })
      if (!row || !(await store.endActive(principal.projectId, runId, 'cancelled', error, now)))
        throw new AppError('not_found', 'Run not found or already finished')
      await stop(row)
      await flows.countRun(row.project_id, row.flow_id, { failed: true, atSeconds: Math.floor(now / 1000) })
    },

    /**
     * Takes over the project's runs whose instance stopped renewing their lease (never a run by its age):
     * each is queued again, resumed or ended interrupted (decision 054). Throws unauthorized, forbidden (write).
     */
    async cleanupStale(principal: Principal): Promise<{ reaped: number }> {
      await access.authorize(principal, `${resource}:write`)
      return { reaped: await runner.recover(principal.projectId) }
    },
  }

  async function stop(row: RunRow): Promise<void> {
    runner.forget(row.id)
    await dispatcher.release(row.id, keysFor(row.project_id, row.flow_id))
    await dispatcher.cancel(row.id)
  }
}

/** `$trigger` of POST /execute and /test: the request body. */
function executeTrigger(body: unknown): TriggerInput {
  return { type: 'manual', event: null, collection: null, method: 'POST', body: body ?? {} }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString())

function runView(row: RunRow): RunView {
  return {
    runId: row.id,
    flowId: row.flow_id,
    version: Number(row.version),
    status: row.status,
    triggerType: row.trigger_type,
    error: row.error ? (JSON.parse(row.error) as unknown) : null,
    depth: Number(row.depth),
    parentRunId: row.parent_run_id,
    retryOf: row.retry_of ?? null,
    createdAt: iso(row.created_at)!,
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
  }
}

function stepLogView(row: StepLogRow): StepLogView {
  const logs = row.logs
    ? (JSON.parse(row.logs) as { lines: unknown[]; unresolved: unknown[] })
    : { lines: [], unresolved: [] }
  return {
    position: Number(row.position),
    key: row.step_key,
    type: row.type,
    status: row.status,
    input: row.input ? (JSON.parse(row.input) as unknown) : null,
    output: row.output ? (JSON.parse(row.output) as unknown) : null,
    error: row.error ? (JSON.parse(row.error) as unknown) : null,
    logs: logs.lines,
    unresolved: logs.unresolved,
    attempts: Number(row.attempts),
    startedAt: iso(row.started_at)!,
    durationMs: Number(row.duration_ms),
  }
}
