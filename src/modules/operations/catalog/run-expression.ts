import { z } from 'zod'
import { isRecord } from '../config-paths.js'
import { evaluateBatch } from '../expressions.js'
import { numeric } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/**
 * Evaluates a JSONata expression over the run: `$trigger`, `$steps`, `$user`, `$flow`, `$run` and `$data`
 * (the trigger body when it is an object, with `input` merged over it; also the expression's input `$`),
 * in an evaluator process (expressions.ts), bounded by `timeout_ms`, a stack of 200, sequences and built
 * lists of 100,000, built strings of 5,000,000 characters, a result of 20,000,000 and the process's
 * memory; regular expressions run on RE2 (linear time). Output `{ result }`.
 */
export const runExpression = defineOperation({
  type: 'run_expression',
  category: 'script',
  label: 'Run expression',
  description:
    'Evaluates a JSONata expression with $trigger, $steps, $user and $data (input merged into it); output { result }.',
  effects: 'none',
  rawPaths: ['expression'],
  configSchema: z.strictObject({
    expression: z.string().min(1).max(10_000).describe('A JSONata expression'),
    input: z.record(z.string(), z.unknown()).default({}).describe('Merged into $data'),
    timeout_ms: numeric(z.number().int().min(100).max(10_000))
      .default(5000)
      .describe('How long the evaluation may take (100-10000 ms)'),
  }),
  async run({ expression, input, timeout_ms }, ctx) {
    const trigger = ctx.data.$trigger
    const body = isRecord(trigger) && isRecord(trigger.body) ? trigger.body : {}
    const data = { ...body, ...input }
    const variables = {
      trigger,
      steps: ctx.data.$steps,
      user: ctx.data.$user,
      flow: ctx.data.$flow,
      run: ctx.data.$run,
      data,
    }
    const [outcome] = await evaluateBatch(
      [expression],
      { kind: 'variables', variables, input: 'data' },
      timeout_ms,
      ctx.signal,
    )
    if (outcome!.ok) return { result: outcome!.value ?? null }
    const { kind, message, code, position } = outcome!
    const details = { ...(code === undefined ? {} : { code }), ...(position === undefined ? {} : { position }) }
    if (kind === 'timeout')
      throw new StepError(
        'expression_timeout',
        `The expression did not finish within ${timeout_ms} ms`,
        { limitMs: timeout_ms },
        400,
        false,
      )
    if (kind === 'syntax')
      throw new StepError('expression_failed', `The expression does not parse: ${message}`, details, 400, false)
    if (kind === 'limit')
      throw new StepError('expression_failed', message, { ...details, code: 'limit_exceeded' }, 400, false)
    throw new StepError('expression_failed', message, details, 400, false)
  },
})
