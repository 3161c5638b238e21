import { z } from 'zod'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { flag, text } from '../schema-helpers.js'
import { defineOperation, StepError, type OperationContext } from '../types.js'

/** ctx.services.subFlows (automate/runs/sub-flows.ts), as this operation uses it. */
export interface SubFlowStarter {
  start(
    principal: Principal,
    request: {
      flowId: string
      body: unknown
      wait: boolean
      parent: { runId: string; flowId: string; depth: number; chain: readonly string[] }
      signal: AbortSignal
    },
  ): Promise<{
    runId: string
    status: string
    outcome: {
      status: string
      steps: Readonly<Record<string, unknown>>
      error: { code: string; message: string; statusCode?: number } | null
    } | null
  }>
}

/** The part of `ctx.services` trigger_flow uses. */
export interface SubFlowServices {
  readonly subFlows: SubFlowStarter
}

/**
 * Starts an active another_flow flow of the project, as the run's principal (its triggering user): only
 * when that principal may execute flows through HTTP (system/automate:execute). `data` becomes the
 * sub-run's `$trigger.body`. Awaited (async false, the default): the sub-run runs now and its outcome is
 * this step's (`{ runId, status, output }`, output being its steps' outputs; a sub-run that does not
 * complete fails the step with subflow_failed). async true: started in the background, `{ runId, status }`.
 * Sub-flows nest at most 8 levels (subflow_depth_exceeded) and a flow already running above in the chain
 * is refused (subflow_cycle), both before anything runs.
 */
export const triggerFlow = defineOperation({
  type: 'trigger_flow',
  category: 'logic',
  label: 'Trigger flow',
  description:
    'Starts an active flow whose trigger is another_flow, with data as its $trigger.body; awaits its outcome unless async. Sub-flows nest at most 8 levels; cycles are refused.',
  // It starts runs: rows, counters and whatever the sub-flow does. A dry run records it as not run.
  effects: 'writes',
  needs: () => [{ resource: 'system/automate', action: 'execute' }],
  configSchema: z.strictObject({
    flowId: text(100, 1).describe(
      'The id of the flow to start (its trigger must be another_flow, and it must be active)',
    ),
    data: z.record(z.string(), z.unknown()).default({}).describe("Becomes the sub-flow run's $trigger.body"),
    async: flag.default(false).describe('true: start it in the background and go on; false: wait for its outcome'),
  }),
  async run(config, ctx) {
    const { subFlows } = ctx.services
    const parent = { runId: ctx.run.id, flowId: ctx.run.flowId, depth: ctx.run.depth, chain: ctx.run.chain }
    const started = await startOrExplain(
      () =>
        subFlows.start(ctx.principal, {
          flowId: config.flowId,
          body: config.data,
          wait: !config.async,
          parent,
          signal: ctx.signal,
        }),
      config.flowId,
      ctx,
    )
    if (config.async || !started.outcome) return { runId: started.runId, status: started.status, async: true }
    const { outcome } = started
    if (outcome.status !== 'completed') {
      const error = outcome.error ?? { code: outcome.status, message: `The sub-flow run ended ${outcome.status}` }
      throw new StepError(
        'subflow_failed',
        `Sub-flow ${config.flowId} (run ${started.runId}) ended ${outcome.status}: ${error.message}`,
        { flowId: config.flowId, runId: started.runId, status: outcome.status, error },
        error.statusCode ?? 400,
        false,
      )
    }
    return { runId: started.runId, status: outcome.status, async: false, output: outcome.steps }
  },
})

/** Runs the start, turning the service's refusals into typed step errors (not retried, but for a quota). */
async function startOrExplain<T>(start: () => Promise<T>, flowId: string, ctx: OperationContext): Promise<T> {
  try {
    return await start()
  } catch (err) {
    if (!(err instanceof AppError)) throw err
    const reason = err.details.reason
    const code = reason === 'cycle' ? 'subflow_cycle' : reason === 'depth' ? 'subflow_depth_exceeded' : err.code
    ctx.log({ level: 'error', message: `trigger_flow ${flowId}: ${err.message}` })
    throw new StepError(code, err.message, { flowId, ...err.details }, err.status, err.code === 'quota_exceeded')
  }
}
