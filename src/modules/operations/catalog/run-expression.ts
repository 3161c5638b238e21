import jsonata from 'jsonata'
import { z } from 'zod'
import { isRecord } from '../config-paths.js'
import { GuardedRegExp, plain } from '../expressions.js'
import { numeric } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** JSONata's code for "Evaluation timeout after N milliseconds". */
const timeoutCode = 'D1012'

/**
 * Evaluates a JSONata expression over the run: `$trigger`, `$steps`, `$user`, `$flow`, `$run` and `$data`
 * (the trigger body when it is an object, with `input` merged over it; also the expression's input `$`),
 * bounded by `timeout_ms`, a stack of 200 and sequences of 100,000; regular expressions pass the ReDoS
 * shape check. Output `{ result }`.
 */
export const runExpression = defineOperation({
  type: 'run_expression',
  category: 'script',
  label: 'Run expression',
  description: 'Evaluates a JSONata expression with $trigger, $steps, $user and $data (input merged into it); output { result }.',
  effects: 'none',
  rawPaths: ['expression'],
  configSchema: z.strictObject({
    expression: z.string().min(1).max(10_000).describe('A JSONata expression'),
    input: z.record(z.string(), z.unknown()).default({}).describe('Merged into $data'),
    timeout_ms: numeric(z.number().int().min(100).max(10_000)).default(5000).describe('How long the evaluation may take (100-10000 ms)'),
  }),
  async run({ expression, input, timeout_ms }, ctx) {
    let compiled: jsonata.Expression
    try {
      compiled = jsonata(expression, { timeout: timeout_ms, stack: 200, sequence: 100_000, RegexEngine: GuardedRegExp as unknown as RegExpConstructor })
    } catch (err) {
      throw new StepError('expression_failed', `The expression does not parse: ${messageOf(err)}`, detailsOf(err), 400, false)
    }
    const trigger = ctx.data.$trigger
    const body = isRecord(trigger) && isRecord(trigger.body) ? trigger.body : {}
    const data = { ...body, ...input }
    const bindings = { trigger, steps: ctx.data.$steps, user: ctx.data.$user, flow: ctx.data.$flow, run: ctx.data.$run, data }
    try {
      return { result: plain(await compiled.evaluate(data, bindings)) ?? null }
    } catch (err) {
      if (detailsOf(err).code === timeoutCode) throw new StepError('expression_timeout', `The expression did not finish within ${timeout_ms} ms`, { limitMs: timeout_ms }, 400, false)
      throw new StepError('expression_failed', messageOf(err), detailsOf(err), 400, false)
    }
  },
})

function messageOf(err: unknown): string {
  return isRecord(err) && typeof err.message === 'string' ? err.message : String(err)
}

function detailsOf(err: unknown): { code?: string; position?: number } {
  if (!isRecord(err)) return {}
  return { ...(typeof err.code === 'string' ? { code: err.code } : {}), ...(typeof err.position === 'number' ? { position: err.position } : {}) }
}

