import { sleep } from './flows-wait.js'
import type { Transport } from './transport.js'

export type RunStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'timed_out'

/** The statuses a run never leaves. */
export const terminalRunStatuses: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'timed_out']

/** A run as lists show it (docs/automation-runs.md); times ISO 8601. */
export interface FlowRun {
  runId: string
  flowId: string
  version: number
  status: RunStatus
  triggerType: string
  /** `{ code, message, step?, statusCode? }` for a failed run, else null. */
  error: { code: string; message: string; step?: string; statusCode?: number; [key: string]: unknown } | null
  depth: number
  parentRunId: string | null
  retryOf: string | null
  createdAt: string
  startedAt: string | null
  finishedAt: string | null
  durationMs: number | null
}

export interface StepLog {
  position: number
  key: string
  type: string
  status: string
  input: unknown
  output: unknown
  error: unknown
  logs: unknown[]
  unresolved: unknown[]
  attempts: number
  startedAt: string
  durationMs: number
}

interface Identity {
  kind: string
  userId: string | null
  roleId: string | null
}

/** A run with its trigger, who it acted as, and its step logs (GET /api/v1/automate/runs/:runId). */
export interface FlowRunDetail extends FlowRun {
  trigger: unknown
  actingAs: Identity & { cappedBy: Identity | null }
  /** true: trigger body and steps' input, output and logs are left out (the caller could not read them all). */
  redacted: boolean
  stepLogs: StepLog[]
}

export interface StartedRun {
  runId: string
  flowId: string
  status: RunStatus
  startedAt: string
  /** The Idempotency-Key was seen before: this is the first call's run. */
  repeated?: true
}

export interface DryRunResult {
  runId: string
  status: RunStatus
  dryRun: true
  error: unknown
  /** Each step: `input` is its config with templates applied (credentials masked), null if it never got that far. */
  steps: {
    key: string
    type: string
    status: string
    input: unknown
    output: unknown
    durationMs: number
    error?: unknown
  }[]
  logs: unknown[]
}

export interface WaitOptions {
  /** The longest pause between two reads of the run (default 1000 ms; the first reads come sooner). */
  intervalMs?: number
  /** Stop waiting (the run goes on): `AbortSignal.timeout(60_000)` for a deadline. */
  signal?: AbortSignal
}

export interface ExecuteOptions {
  /** Repeats within 24 h answer the first call's run instead of starting another. */
  idempotencyKey?: string
  signal?: AbortSignal
}

export interface Flows {
  /** Starts a run of the flow's published version; `payload` is `$trigger.body`. 202 → the run, pending or running. */
  execute(flowId: string, payload?: unknown, options?: ExecuteOptions): Promise<StartedRun>
  /** execute, then wait: the run once it has ended (completed, failed, cancelled or timed_out). */
  executeAndWait(flowId: string, payload?: unknown, options?: ExecuteOptions & WaitOptions): Promise<FlowRunDetail>
  /** A dry run of the draft: nothing is written, steps that write are skipped (POST /flows/:id/test). */
  test(flowId: string, payload?: unknown): Promise<DryRunResult>
  run(runId: string): Promise<FlowRunDetail>
  /** Resolves with the run once it has ended. A failed run is an answer, not an exception: read `status` and `error`. */
  wait(runId: string, options?: WaitOptions): Promise<FlowRunDetail>
  /**
   * The run each time its status or a step's changes, the first read included, ending with the run's end.
   * The server has no stream of runs: this reads GET /runs/:id, sooner at first, then every `intervalMs`.
   */
  watch(runId: string, options?: WaitOptions): AsyncIterable<FlowRunDetail>
  runs(query?: { flowId?: string; status?: RunStatus; page?: number; limit?: number }): Promise<{
    data: FlowRun[]
    total: number
    page: number
    limit: number
    hasMore: boolean
  }>
  cancel(runId: string): Promise<void>
  /** A new run of a failed, cancelled or timed-out run's version with the same trigger payload. */
  retry(runId: string): Promise<StartedRun>
}

const base = '/api/v1/automate'
const enc = encodeURIComponent

/** The automation part of the client, over one Transport. */
export function createFlows(transport: Transport): Flows {
  const run = async (runId: string) =>
    (await transport.request<{ data: FlowRunDetail }>('GET', `${base}/runs/${enc(runId)}`)).data

  async function* watch(runId: string, options: WaitOptions = {}): AsyncGenerator<FlowRunDetail> {
    const ceiling = options.intervalMs ?? 1000
    let pause = Math.min(50, ceiling)
    let seen = ''
    for (;;) {
      const current = await run(runId)
      const fingerprint = JSON.stringify([current.status, current.stepLogs.map((s) => [s.key, s.status])])
      if (fingerprint !== seen) {
        seen = fingerprint
        yield current
      }
      if (terminalRunStatuses.includes(current.status)) return
      await sleep(pause, options.signal)
      // Short runs end within milliseconds: read soon at first, then back off to the interval.
      pause = Math.min(ceiling, pause * 2)
    }
  }

  const wait = async (runId: string, options: WaitOptions = {}) => {
    let last: FlowRunDetail | undefined
    for await (const current of watch(runId, options)) last = current
    return last as FlowRunDetail
  }

  const execute = async (flowId: string, payload?: unknown, options: ExecuteOptions = {}) =>
    (
      await transport.request<{ data: StartedRun }>('POST', `${base}/flows/${enc(flowId)}/execute`, {
        body: payload,
        headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {},
        signal: options.signal,
      })
    ).data

  return {
    execute,
    async executeAndWait(flowId, payload, options = {}) {
      const started = await execute(flowId, payload, options)
      return wait(started.runId, options)
    },
    async test(flowId, payload) {
      return (
        await transport.request<{ data: DryRunResult }>('POST', `${base}/flows/${enc(flowId)}/test`, { body: payload })
      ).data
    },
    run,
    wait,
    watch,
    async runs(query = {}) {
      return transport.request('GET', `${base}/runs`, {
        query: { flow_id: query.flowId, status: query.status, page: query.page, limit: query.limit },
      })
    },
    async cancel(runId) {
      await transport.request('POST', `${base}/runs/${enc(runId)}/cancel`)
    },
    async retry(runId) {
      return (await transport.request<{ data: StartedRun }>('POST', `${base}/runs/${enc(runId)}/retry`)).data
    },
  }
}
