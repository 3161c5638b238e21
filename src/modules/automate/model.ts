import { z } from 'zod'
import { nestingBeyond } from '../../lib/json-bounds.js'
import type { Principal } from '../../lib/principal.js'
import type { TriggerType } from './triggers/registry.js'

/**
 * The shapes of automation shared by flows, runs and triggers (automation spec "Flow", "Step settings",
 * "Flow options", "Run"). Wire names are the spec's (camelCase fields; snake_case option keys).
 */

export const flowStatuses = ['draft', 'active', 'inactive'] as const
export type FlowStatus = (typeof flowStatuses)[number]

/** The trigger types are the registry's (triggers/registry.ts): each trigger's file and its line there. */
export type { TriggerType } from './triggers/registry.js'

export const runStatuses = ['pending', 'running', 'completed', 'failed', 'cancelled', 'timed_out'] as const
export type RunStatus = (typeof runStatuses)[number]
export const terminalRunStatuses: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled', 'timed_out'])

export const stepStatuses = ['pending', 'running', 'completed', 'failed', 'skipped'] as const
export type StepStatus = (typeof stepStatuses)[number]

/** A step key: used in `$steps.<key>`, so a template name (letters, digits, _ and -), 1-100 characters. */
export const StepKey = z
  .string()
  .regex(/^[A-Za-z_][\w-]{0,99}$/, 'must be 1-100 letters, digits, _ or -, starting with a letter or _')

export const RetryConfigSchema = z.object({
  maxAttempts: z.number().int().min(1).max(10).default(3),
  delayMs: z.number().int().min(0).max(60_000).default(1000),
  backoff: z.enum(['fixed', 'exponential']).default('fixed'),
})

/**
 * How deep (objects and arrays) a step's config, condition and fallback value, and a trigger config, may
 * nest: far more than any operation needs (8 levels of nested steps take about 30), and checked with its
 * own stack before the masking, the registry's check, a template walk or JSON.stringify sees the value,
 * all of which recurse and would overflow the call stack on a value 5,000 levels deep (decision 051).
 */
export const maxConfigNesting = 64

/** Segments of the path an issue names (the place past the bound is 65 deep: the start shows where it is). */
const shownSegments = 8

/** An issue where `value` starts to nest past maxConfigNesting, under `at`; says what and that it goes on below. */
function refuseDeep(value: unknown, at: readonly string[], what: string, ctx: z.RefinementCtx): void {
  const path = nestingBeyond(value, maxConfigNesting)
  if (!path) return
  const below = path.length > shownSegments ? ' (below here)' : ''
  ctx.addIssue({
    code: 'custom',
    path: [...at, ...path.slice(0, shownSegments)],
    message: `${what} nests more than ${maxConfigNesting} levels deep${below}`,
  })
}

/**
 * Bounds a trigger config's nesting (its type's schema is applied separately). A refinement, not a schema:
 * the wire schema that uses it is built where zod carries its OpenAPI extension (lib/http).
 */
export function boundTriggerConfig(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  refuseDeep(config, [], 'the trigger config', ctx)
}

/** One step (operation node) of a flow, as saved: config is checked against its operation's schema separately. */
export const StepSchema = z
  .object({
    key: StepKey,
    type: z.string().min(1).max(100),
    config: z.record(z.string(), z.unknown()).default({}),
    /** A rule tree (operations/rules.ts); the step is skipped when it evaluates to false. */
    condition: z.unknown().optional(),
    onError: z.enum(['stop', 'continue', 'retry', 'fallback']).default('stop'),
    retryConfig: RetryConfigSchema.optional(),
    fallbackValue: z.unknown().optional(),
  })
  .superRefine((step, ctx) => {
    // The fields above only look one level in; nothing has walked the values yet.
    refuseDeep(step.config, ['config'], `step '${step.key}': config`, ctx)
    refuseDeep(step.condition, ['condition'], `step '${step.key}': condition`, ctx)
    refuseDeep(step.fallbackValue, ['fallbackValue'], `step '${step.key}': fallbackValue`, ctx)
  })
export type Step = z.output<typeof StepSchema>

export const defaultFlowOptions = {
  timeout_ms: 30_000,
  max_retries: 0,
  concurrency: 'sequential',
  error_handling: 'stop_on_first',
  log_level: 'full',
} as const

export const FlowOptionsSchema = z.object({
  timeout_ms: z.number().int().min(100).max(3_600_000).default(defaultFlowOptions.timeout_ms),
  max_retries: z.number().int().min(0).max(10).default(defaultFlowOptions.max_retries),
  /** sequential (one run of the flow at a time), parallel (bounded by the project quota), or N at a time. */
  concurrency: z
    .union([z.enum(['sequential', 'parallel']), z.number().int().min(1).max(100)])
    .default(defaultFlowOptions.concurrency),
  error_handling: z.enum(['stop_on_first', 'continue_all']).default(defaultFlowOptions.error_handling),
  log_level: z.enum(['full', 'errors_only', 'none']).default(defaultFlowOptions.log_level),
})
export type FlowOptions = z.output<typeof FlowOptionsSchema>

/** runAs: triggering_user (default), flow_owner, or role:<roleId>. */
export const RunAsSchema = z.union([
  z.literal('triggering_user'),
  z.literal('flow_owner'),
  z.string().regex(/^role:[\w-]{1,64}$/, 'must be triggering_user, flow_owner or role:<roleId>'),
])
export type RunAs = z.output<typeof RunAsSchema>

/** The part of a flow a version freezes and a run executes. */
export interface FlowDefinition {
  readonly name: string
  readonly triggerType: TriggerType
  readonly triggerConfig: Record<string, unknown>
  readonly operations: readonly Step[]
  readonly options: FlowOptions
  readonly collections: readonly string[]
  readonly runAs: RunAs
}

/** `$trigger` of a run: what started it. */
export interface TriggerInput {
  readonly type: TriggerType
  /** record.create, user.login, …; null for webhooks, manual and API runs. */
  readonly event: string | null
  readonly collection: string | null
  /** The HTTP method of a webhook or api_endpoint call. */
  readonly method: string | null
  readonly body: unknown
  /**
   * another_flow runs only: the ids of the flows of the runs above this one, the top run's first (the
   * trigger_flow cycle check, triggers/another-flow.ts). The engine keeps it with the trigger and shows it
   * as `$trigger.chain`, so a sub-flow that starts another one passes it on.
   */
  readonly chain?: readonly string[]
}

/** A flow as runs and triggers read it (no permission check: their callers were checked, or the trigger is the flow's own). */
export interface FlowForRun {
  readonly id: string
  readonly projectId: string
  readonly slug: string
  readonly name: string
  readonly status: FlowStatus
  readonly triggerType: TriggerType
  /** The flow's creator (flow_owner; a schedule's fallback identity); null once deleted. */
  readonly createdBy: string | null
  readonly webhookToken: string
  readonly publishedVersion: number | null
  /** Who made the published version the one that runs (a person's id or `key:<id>`): no run acts beyond them (decision 045). */
  readonly publishedBy?: string | null
  /** What production runs: the published version's definition; null until the first publish. */
  readonly published: FlowDefinition | null
  /** The draft (what the test endpoint dry-runs). */
  readonly draft: FlowDefinition
  /** A system-managed flow (decision 038): its runs act as the system principal, whoever set them off. */
  readonly system?: boolean
}

/**
 * What the flows service offers the run engine and the triggers (built after it). Reads are by project
 * first; `changes` tells listeners (trigger caches, schedules) that a flow changed or was deleted.
 */
export interface FlowLookup {
  byId(projectId: string, flowId: string): Promise<FlowForRun | null>
  byWebhookToken(token: string): Promise<FlowForRun | null>
  /** One published version's definition (a run executes the version it was started on); null when gone. */
  version(projectId: string, flowId: string, version: number): Promise<FlowDefinition | null>
  /** Active flows of the project with this trigger type (cached; dropped on every change, on every instance). */
  activeByTrigger(projectId: string, triggerType: TriggerType): Promise<readonly FlowForRun[]>
  /** Every active flow of every project with this trigger type (schedules at start-up). */
  activeByTriggerAcrossProjects(triggerType: TriggerType): Promise<readonly FlowForRun[]>
  /** Counts a finished run on the flow: run_count, error_count when it failed, last_run_at. */
  countRun(projectId: string, flowId: string, outcome: { failed: boolean; atSeconds: number }): Promise<void>
  /** Counts several finished runs of the flow in one write (the run engine writes ends in batches): `runs` more, `failures` more errors, last_run_at. */
  countRuns?(
    projectId: string,
    flowId: string,
    counts: { runs: number; failures: number; atSeconds: number },
  ): Promise<void>
  /** Told after a flow was created, changed, published, rolled back, had its status changed or was deleted (null). */
  readonly changes: {
    add(listener: (projectId: string, flowId: string, flow: FlowForRun | null) => Promise<void>): () => void
  }
}

/** How a run ended, for a caller that waits for it (event_filter, an awaited trigger_flow, the test endpoint). */
export interface RunOutcome {
  readonly runId: string
  readonly status: RunStatus
  /** Each step's output by key (what `$steps` held at the end). */
  readonly steps: Readonly<Record<string, unknown>>
  /** For failed, cancelled and timed_out runs: the code, message, failing step and the status a blocking trigger answers. */
  readonly error: {
    readonly code: string
    readonly message: string
    readonly step?: string
    readonly statusCode?: number
  } | null
}

/** How a start is made beyond the trigger: sub-flow depth and parent, an Idempotency-Key, the run it retries. */
export interface StartOptions {
  readonly depth?: number
  readonly parentRunId?: string
  /** A repeat of a key within 24 h answers the first call's run (`repeated: true`) instead of starting one. */
  readonly idempotencyKey?: string
  readonly retryOf?: string
}

/** What the run engine offers the triggers and the trigger_flow operation. */
export interface RunStarter {
  /**
   * Starts a run of the flow's published version in the background (202-style): checks the flow is active
   * and the project's quotas, writes the run row (running, or pending while a concurrency slot is taken)
   * and queues it. `initiator` is who triggered it (null for webhooks and schedules); runAs resolves from it.
   * Throws AppError (not_found, conflict for an inactive flow, quota_exceeded …).
   */
  start(
    flow: FlowForRun,
    trigger: TriggerInput,
    initiator: Principal | null,
    options?: StartOptions,
  ): Promise<{ runId: string; status: RunStatus; startedAt: string; repeated?: boolean }>
  /**
   * Runs the published version now, in the caller, and resolves with its outcome (a blocking event_filter, an
   * awaited sub-flow). `signal`: the caller's (an awaited sub-flow's parent run); when it aborts, this run
   * is cancelled, so a parent's timeout or cancel also ends the sub-run it waits for.
   */
  runNow(
    flow: FlowForRun,
    trigger: TriggerInput,
    initiator: Principal | null,
    options?: { depth?: number; parentRunId?: string; signal?: AbortSignal },
  ): Promise<RunOutcome>
}
