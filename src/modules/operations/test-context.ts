import { createManualClock, type ManualClock } from '../../lib/clock-manual.js'
import { principals } from '../../lib/principal.js'
import type { OperationServices } from './operation-services.js'
import type { OperationContext, StepLogLine, StepNode } from './types.js'

/** Some of the services, each only as far as the operation under test uses it (names still checked). */
export type TestServices = { readonly [K in keyof OperationServices]?: unknown }

/**
 * A unit test's `ctx.services`: only what the operation under test reaches. The one place a partial set
 * passes for the whole: a run's context is always given every service (decision 058).
 */
export function testServices(given: TestServices = {}): OperationServices {
  return given as OperationServices
}

/** A context for running one operation in a unit test: a manual clock, the log lines kept, nested steps recorded. */
export function testContext(
  data: Record<string, unknown> = {},
  options: {
    clock?: ManualClock
    signal?: AbortSignal
    runSteps?: OperationContext['runSteps']
    key?: string
    services?: TestServices
    depth?: number
    chain?: string[]
    dryRun?: boolean
  } = {},
) {
  const lines: StepLogLine[] = []
  const nested: (readonly StepNode[])[] = []
  const clock = options.clock ?? createManualClock(Date.UTC(2026, 0, 1))
  const ctx: OperationContext = {
    principal: principals.system('p1', 'test'),
    services: testServices(options.services),
    clock,
    signal: options.signal ?? new AbortController().signal,
    step: { key: options.key ?? 'step' },
    run: {
      id: 'run-1',
      flowId: 'flow-1',
      projectId: 'p1',
      dryRun: options.dryRun ?? false,
      depth: options.depth ?? 0,
      chain: options.chain ?? [],
    },
    data: { $trigger: { body: {} }, $steps: {}, ...data },
    log: (line) => lines.push(line),
    runSteps:
      options.runSteps ??
      (async (steps) => {
        nested.push(steps)
        return Object.fromEntries(steps.map((s) => [s.key, `ran ${s.type}`]))
      }),
  }
  return { ctx, lines, nested, clock }
}
