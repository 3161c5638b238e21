import { describe, expect, it } from 'vitest'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { runExpression } from './run-expression.js'

const run = async (config: Record<string, unknown>, data: Record<string, unknown> = {}) => {
  const { ctx } = testContext(data)
  return runExpression.run(runExpression.configSchema.parse(config), ctx)
}
const failure = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  return err as StepError
}

describe('run_expression config', () => {
  it('needs an expression; defaults input {} and timeout_ms 5000', () => {
    expect(runExpression.configSchema.safeParse({}).success).toBe(false)
    expect(runExpression.configSchema.safeParse({ expression: '' }).success).toBe(false)
    expect(runExpression.configSchema.parse({ expression: '1' })).toEqual({
      expression: '1',
      input: {},
      timeout_ms: 5000,
    })
  })
  it('timeout_ms is 100-10000 (each bound ±1)', () => {
    for (const [ms, ok] of [
      [99, false],
      [100, true],
      [101, true],
      [9_999, true],
      [10_000, true],
      [10_001, false],
      ['250', true],
    ] as const) {
      expect(runExpression.configSchema.safeParse({ expression: '1', timeout_ms: ms }).success, String(ms)).toBe(ok)
    }
  })
  it('the expression is at most 10,000 characters and never a template (raw)', () => {
    expect(runExpression.configSchema.safeParse({ expression: 'x'.repeat(10_000) }).success).toBe(true)
    expect(runExpression.configSchema.safeParse({ expression: 'x'.repeat(10_001) }).success).toBe(false)
    expect(runExpression.rawPaths).toContain('expression')
  })
})

describe('run_expression', () => {
  const data = {
    $trigger: { body: { qty: 3, price: 4, country: 'DE' } },
    $steps: { fetch: { rows: [{ n: 1 }, { n: 2 }] } },
    $user: { id: 'u1', email: 'ada@example.com' },
  }

  it('reads $trigger, $steps, $user and $data (the trigger body with input merged over it)', async () => {
    expect(await run({ expression: '$trigger.body.qty * $trigger.body.price' }, data)).toEqual({ result: 12 })
    expect(await run({ expression: '$sum($steps.fetch.rows.n)' }, data)).toEqual({ result: 3 })
    expect(await run({ expression: '$user.email' }, data)).toEqual({ result: 'ada@example.com' })
    expect(await run({ expression: '$data.qty * $data.price', input: { price: 10 } }, data)).toEqual({ result: 30 })
    // $data is also the expression's input: bare paths read it.
    expect(await run({ expression: 'country & "/" & extra', input: { extra: 'x' } }, data)).toEqual({ result: 'DE/x' })
  })
  it('gives plain JSON: sequences as arrays, nothing for an absent path', async () => {
    expect(await run({ expression: '$steps.fetch.rows.{ "double": n * 2 }' }, data)).toEqual({
      result: [{ double: 2 }, { double: 4 }],
    })
    expect(await run({ expression: '$trigger.body.missing' }, data)).toEqual({ result: null })
  })
  it('an expression that does not parse or fails is expression_failed, not retried', async () => {
    expect(await failure(run({ expression: '1 +' }))).toMatchObject({ code: 'expression_failed', retryable: false })
    expect(await failure(run({ expression: '$number("abc") + $notAFunction()' }))).toMatchObject({
      code: 'expression_failed',
    })
  })
  it('an evaluation past timeout_ms is expression_timeout', async () => {
    const slow = '( $f := function($n){ $n <= 1 ? $n : $f($n-1) + $f($n-2) }; $f(40) )'
    expect(await failure(run({ expression: slow, timeout_ms: 100 }))).toMatchObject({
      code: 'expression_timeout',
      details: { limitMs: 100 },
    })
  })
  it('refuses a regular expression RE2 cannot run (a backreference)', async () => {
    expect(await failure(run({ expression: '$match("aa", /(a)\\1/)' }))).toMatchObject({
      code: 'expression_failed',
    })
  })
  it('runs a regular expression with nested repetition in linear time (RE2)', async () => {
    expect(await run({ expression: '$exists($match($pad("", 50000, "a") & "!", /(a+)+$/))' })).toEqual({
      result: false,
    })
  })
})
