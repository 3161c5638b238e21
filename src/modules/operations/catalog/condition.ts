import { z } from 'zod'
import { evaluateRuleTree } from '../rules.js'
import { ruleTree, StepListSchema } from '../schema-helpers.js'
import { defineOperation } from '../types.js'

/**
 * Evaluates a rule tree (rules.ts) and runs the matching branch, when there is one, through the engine
 * (`ctx.runSteps`: templates, conditions, onError and step logs as for any step). Output
 * `{ result, branch, outputs }`: branch is 'then' or 'else' when one ran, else null; outputs are the
 * branch's step outputs by key (also readable as `$steps.<key>`).
 */
export const condition = defineOperation({
  type: 'condition',
  category: 'logic',
  label: 'Condition',
  description:
    'Compares fields with values (eq, neq, gt, gte, lt, lte, in, nin, contains, starts_with, ends_with, is_null, is_empty, matches; _and / _or) and runs the then or else steps; output { result, branch, outputs }.',
  effects: 'none',
  nestedSteps: ['then', 'else'],
  // Rule fields are paths and branch steps resolve their own templates when they run.
  rawPaths: ['rules', 'then', 'else'],
  configSchema: z.strictObject({
    rules: ruleTree(),
    then: StepListSchema.optional().describe('Steps run when the rules hold'),
    else: StepListSchema.optional().describe('Steps run when they do not'),
  }),
  async run(config, ctx) {
    const result = await evaluateRuleTree(config.rules, ctx.data)
    const branch = result ? config.then : config.else
    if (!branch || branch.length === 0) return { result, branch: null, outputs: {} }
    const outputs = await ctx.runSteps(branch)
    return { result, branch: result ? ('then' as const) : ('else' as const), outputs }
  },
})
