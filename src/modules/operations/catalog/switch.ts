import { z } from 'zod'
import { same } from '../rules.js'
import { requiredValue, StepListSchema } from '../schema-helpers.js'
import { defineOperation, type StepNode } from '../types.js'

const CaseSchema = z.strictObject({
  match: requiredValue().describe('The value this case matches (a template may give it)'),
  steps: StepListSchema.describe('Steps run when it matches'),
})

/**
 * Compares `value` with each case's `match` in order, as the rule operator eq does (42 matches "42",
 * true matches "true", lists and objects structurally), and runs the first matching case's steps through
 * the engine; `default` runs when none matches. Output `{ value, case, outputs }`: case is the matching
 * case's index, 'default', or null when nothing ran.
 */
export const switchOperation = defineOperation({
  type: 'switch',
  category: 'logic',
  label: 'Switch',
  description:
    'Runs the steps of the first case whose match equals the value (as eq compares), or the default steps; output { value, case, outputs }.',
  effects: 'none',
  nestedSteps: ['cases[].steps', 'default'],
  // Case steps resolve their own templates when they run; value and match are resolved here.
  rawPaths: ['cases[].steps', 'default'],
  configSchema: z.strictObject({
    value: requiredValue().describe('The value to switch on (a template such as {{$trigger.body.status}})'),
    cases: z.array(CaseSchema).min(1).max(100).describe('Cases, tried in order: { match, steps }'),
    default: StepListSchema.optional().describe('Steps run when no case matches'),
  }),
  async run(config, ctx) {
    const index = config.cases.findIndex((c) => same(config.value, c.match))
    const steps = index >= 0 ? config.cases[index]!.steps : config.default
    const chosen = index >= 0 ? index : config.default ? ('default' as const) : null
    if (!steps || steps.length === 0) return { value: config.value, case: chosen, outputs: {} }
    const outputs = await ctx.runSteps(steps as readonly StepNode[])
    return { value: config.value, case: chosen, outputs }
  },
})
