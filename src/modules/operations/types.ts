import type { z } from 'zod'
import type { Clock } from '../../lib/clock.js'
import type { Principal } from '../../lib/principal.js'
import type { OperationServices } from './operation-services.js'

/** The catalog's categories (automation spec "Operation configurations"). */
export type OperationCategory =
  | 'data'
  | 'logic'
  | 'transform'
  | 'ai'
  | 'files'
  | 'network'
  | 'script'
  | 'communication'
  | 'system'

/**
 * What a step's operation may do beyond computing its output. A dry run (`POST /flows/:id/test`) runs
 * `none` and `reads` operations and records `writes` ones as not run, so a test writes nothing anywhere.
 */
export type OperationEffects = 'none' | 'reads' | 'writes'

/**
 * One right a step needs of whom its run acts as: an action on a collection of the project
 * (`collections/<name>:<action>`, and the collection must exist), or on a system resource
 * (`system/files:create`). Derived from the step's config as saved (templates unresolved): a collection
 * named by a template is unknown ahead and is not listed.
 */
export type OperationNeed =
  | { readonly collection: string; readonly action: string }
  | { readonly resource: string; readonly action: string }

/** A need with the step that has it (its key, nested steps included: keys are unique in a flow). */
export interface StepNeed {
  readonly step: string
  readonly type: string
  readonly need: OperationNeed
}

/** One step as the engine hands nested steps around (loop, switch, condition branches). */
export interface StepNode {
  readonly key: string
  readonly type: string
  readonly config: Record<string, unknown>
  readonly condition?: unknown
  readonly onError?: 'stop' | 'continue' | 'retry' | 'fallback'
  readonly retryConfig?: {
    readonly maxAttempts: number
    readonly delayMs: number
    readonly backoff: 'fixed' | 'exponential'
  }
  readonly fallbackValue?: unknown
}

/** A line an operation writes to its step log (operation `log`, a warning, a skipped sub-step). */
export interface StepLogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error'
  readonly message: string
  readonly data?: unknown
}

/**
 * What a running operation is given. It never touches a database directly: everything it reads or writes
 * goes through `services` as `principal` (the run's: row and column rules apply), and it stops when
 * `signal` aborts (the run's timeout, a cancel).
 */
export interface OperationContext {
  /** Whom the run acts as (runAs, resolved when the run started). */
  readonly principal: Principal
  /** The platform's services (records, files, …), each checking `principal` itself. */
  readonly services: OperationServices
  readonly clock: Clock
  /** Aborted by the flow's timeout or a cancel; pass it to every wait and request. */
  readonly signal: AbortSignal
  /** The step being run: its key as written in the flow (a loop's `$steps.<key>.item`). */
  readonly step: { readonly key: string }
  /** `depth`: 0 for a top run, n for a sub-flow n levels down; `chain`: the ids of the flows of the runs above (trigger_flow's cycle check). */
  readonly run: {
    readonly id: string
    readonly flowId: string
    readonly projectId: string
    readonly dryRun: boolean
    readonly depth: number
    readonly chain: readonly string[]
  }
  /** The template context at this step: `$trigger`, `$steps`, `$user`, `$flow`, `$run`, `$now`. */
  readonly data: Readonly<Record<string, unknown>>
  /** Writes a line to this step's log (kept or dropped by the flow's log_level). */
  log(line: StepLogLine): void
  /**
   * Runs nested steps (loop bodies, switch cases, condition branches) with the engine's own rules
   * (templates, conditions, onError, step logs under `<parent>.<child>` keys), with `scope` added to
   * `$steps` (a loop's `{ [loopKey]: { item, index } }`). A nested step reads the ones before it in its
   * list as `$steps.<key>`. `iteration` keys the step logs `<parent>[<n>].<child>` (a loop's passes).
   * Resolves to the nested steps' outputs by key.
   */
  runSteps(
    steps: readonly StepNode[],
    scope?: Record<string, unknown>,
    options?: { readonly iteration?: number },
  ): Promise<Record<string, unknown>>
}

/**
 * One operation of the catalog: one file under `catalog/`, collected in the registry's static array.
 * `configSchema` is the truth for saving (checked with templates allowed where values go) and for running
 * (checked again after templates are resolved, defaults filled in); the catalog's form fields and JSON
 * Schema are derived from it.
 */
export interface OperationDefinition<C = any, O = unknown> {
  readonly type: string
  readonly category: OperationCategory
  readonly label: string
  readonly description: string
  /**
   * The most the operation may do whatever its config (the run engine's durable step logs and a lost
   * instance's recovery read it). `effectsWhen` may say less for a given config.
   */
  readonly effects: OperationEffects
  /**
   * What a step with this config (as saved: templates unresolved) may do, never more than `effects`: a
   * run_script without allowed_domains computes only, crud_action read only reads. A dry run runs the step
   * unless this says `writes`. A template where the answer depends on a value must give the worst case.
   */
  effectsWhen?(config: Readonly<Record<string, unknown>>): OperationEffects
  /** With `effectsWhen`: in which configs it says less, for docs/operations.md (`reads when action is get, list or head`). */
  readonly effectsNote?: string
  /** The rights a step with this config (as saved) needs of whom its run acts as (flow preflight, decision 053). */
  needs?(config: Readonly<Record<string, unknown>>): readonly OperationNeed[]
  /** `system_*` operations: run by system-managed flows only, refused in user flows. */
  readonly system?: boolean
  /**
   * Config paths (dot paths; a part ending in `[]` means every element: `cases[].steps`) that hold step
   * lists run through `ctx.runSteps` (loop `operations`, …): checked as steps on save.
   */
  readonly nestedSteps?: readonly string[]
  /** Config paths (as `nestedSteps`) whose strings are NOT templates to resolve before `run` (a rule tree's field paths, nested steps, …). */
  readonly rawPaths?: readonly string[]
  readonly configSchema: z.ZodType<C>
  /** A config as a flow would hold it, shown in docs/operations.md (checked against the schema by its test). */
  readonly example?: Readonly<Record<string, unknown>>
  run(config: C, ctx: OperationContext): Promise<O>
}

/** Helper keeping each catalog file's config type inferred from its schema. */
export function defineOperation<S extends z.ZodType, O>(
  definition: Omit<OperationDefinition<z.output<S>, O>, 'configSchema'> & { configSchema: S },
): OperationDefinition<z.output<S>, O> {
  return definition as OperationDefinition<z.output<S>, O>
}

/**
 * A typed step failure: `code` for the step log and the run's error, `statusCode` for what a blocking
 * trigger answers (throw_error, a stop with status error in an event_filter flow), `retryable` for onError
 * retry (an operation saying false is not retried).
 */
export class StepError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly statusCode = 400,
    readonly retryable = true,
  ) {
    super(message)
    this.name = 'StepError'
  }
}

/**
 * Thrown by `stop`: ends the run at this step with `status` (success → completed; error → failed, and in an
 * event_filter flow the triggering write is rejected with `message`).
 */
export class StopRun extends Error {
  constructor(
    readonly status: 'success' | 'error',
    message: string,
  ) {
    super(message)
    this.name = 'StopRun'
  }
}

/** A config after its templates were resolved and its schema applied (defaults filled in). */
export interface PreparedConfig {
  readonly config: unknown
  /** Tags that gave the empty value, with their path and reason (written to the step log; not an error). */
  readonly unresolved: readonly {
    readonly path: string
    readonly tag: string
    readonly reason: string
    readonly message: string
  }[]
}

/**
 * The operations catalog as the flows service (save-time checks), the run engine and the catalog routes
 * use it. Built once from the static array of definitions.
 */
/** Options of OperationRegistry.checkSteps. */
export interface CheckStepsOptions {
  /** Allows the `system_*` operations (system-managed flows only). */
  readonly system?: boolean
  /** Whether the config of a step of `type` may lack a value at `path` (nothing there at all); the issue is then not one. */
  readonly missingAllowed?: (type: string, path: readonly (string | number)[]) => boolean
}

export interface OperationRegistry {
  get(type: string): OperationDefinition | undefined
  /** Every operation, in catalog order. */
  list(): readonly OperationDefinition[]
  /**
   * The save-time check of a flow's steps, nested ones included: each type exists (and is not `system_*`
   * unless `system`), keys are unique in the flow, each config satisfies its schema with a template allowed
   * wherever a value goes, templates parse (roots $trigger $steps $user $flow $run $now), condition rule
   * trees are valid. Throws AppError validation_error (422) naming the step key and the config path.
   * `missingAllowed` (a draft's check) lets a config lack a value where it answers true: a credential the
   * flow has yet to be given (automation "missingCredentials").
   */
  checkSteps(steps: readonly StepNode[], options?: CheckStepsOptions): void
  /**
   * Resolves a step's config against the run's template context (`{{= }}` through JSONata, except under
   * `rawPaths`), then applies its schema. Throws StepError invalid_config when the resolved config does
   * not satisfy the schema.
   */
  prepare(step: StepNode, data: Readonly<Record<string, unknown>>): Promise<PreparedConfig>
  /**
   * What the step may do with its config as saved (the definition's `effectsWhen`, else its `effects`); an
   * unknown type counts as `writes`. Nested steps are not included: the engine checks each as it runs it.
   */
  effectsOf(step: Pick<StepNode, 'type' | 'config'>): OperationEffects
  /** The rights the steps need (each definition's `needs`), nested steps included, in step order; unknown types need nothing known. */
  needsOf(steps: readonly StepNode[]): StepNeed[]
  /** Evaluates a step `condition` rule tree against the template context (paths resolved, values templated). */
  evaluateCondition(tree: unknown, data: Readonly<Record<string, unknown>>): Promise<boolean>
}
