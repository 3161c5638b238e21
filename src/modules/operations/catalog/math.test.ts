import { describe, expect, it } from 'vitest'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { math, roundTo } from './math.js'

const run = (config: Record<string, unknown>) => math.run(math.configSchema.parse(config), testContext().ctx)

describe('math', () => {
  const rows: [string, Record<string, unknown>, number][] = [
    ['sum', { operation: 'sum', values: [1, 2, 3.5] }, 6.5],
    ['sum of nothing', { operation: 'sum', values: [] }, 0],
    ['sum with numeric strings', { operation: 'sum', values: ['1', ' 2 ', '-3e1'] }, -27],
    ['sum with float noise, rounded', { operation: 'sum', values: [0.1, 0.2], precision: 2 }, 0.3],
    ['avg', { operation: 'avg', values: [1, 2, 3, 4] }, 2.5],
    ['min', { operation: 'min', values: [3, -1, 2] }, -1],
    ['max', { operation: 'max', values: ['3', 10, 2] }, 10],
    ['round', { operation: 'round', values: [2.5] }, 3],
    ['round half away from zero', { operation: 'round', values: [-2.5] }, -3],
    ['round at a precision', { operation: 'round', values: [1.005], precision: 2 }, 1.01],
    ['floor', { operation: 'floor', values: [-1.2] }, -2],
    ['floor at a precision', { operation: 'floor', values: [1.239], precision: 2 }, 1.23],
    ['ceil', { operation: 'ceil', values: [1.01] }, 2],
    ['abs', { operation: 'abs', values: [-4] }, 4],
    ['formula', { operation: 'formula', formula: '(2 + 3) * 4 ^ 2 / 10' }, 8],
    ['formula as a number', { operation: 'formula', formula: 7 }, 7],
    ['formula at a precision', { operation: 'formula', formula: '10 / 3', precision: 3 }, 3.333],
    ['precision 0', { operation: 'avg', values: [1, 2], precision: 0 }, 2],
  ]
  it.each(rows)('%s', async (_name, config, result) => {
    expect(await run(config)).toEqual({ result })
  })

  const failures: [string, Record<string, unknown>, RegExp][] = [
    ['a value that is no number', { operation: 'sum', values: [1, 'two'] }, /values\[1\] is not a number/],
    ['an empty text value', { operation: 'sum', values: [''] }, /values\[0\] is not a number/],
    ['avg of nothing', { operation: 'avg', values: [] }, /needs at least one value/],
    ['a formula syntax error', { operation: 'formula', formula: '1 +' }, /formula: the formula ends too early/],
    ['a division by zero', { operation: 'formula', formula: '1 / (2 - 2)' }, /division by zero/],
    ['an overflow', { operation: 'sum', values: [1e308, 1e308] }, /not a finite number/],
    [
      'a hostile formula',
      { operation: 'formula', formula: 'constructor.constructor("return process")()' },
      /unexpected "\."/,
    ],
  ]
  it.each(failures)('fails with math_error on %s', async (_name, config, message) => {
    const attempt = run(config)
    await expect(attempt).rejects.toBeInstanceOf(StepError)
    await expect(attempt).rejects.toMatchObject({
      code: 'math_error',
      retryable: false,
      message: expect.stringMatching(message),
    })
  })

  it('its schema asks for what each operation needs', () => {
    expect(math.configSchema.safeParse({ operation: 'formula' }).success).toBe(false)
    expect(math.configSchema.safeParse({ operation: 'sum' }).success).toBe(false)
    expect(math.configSchema.safeParse({ operation: 'abs', values: [1, 2] }).success).toBe(false)
    expect(math.configSchema.safeParse({ operation: 'sum', values: [1], precision: 21 }).success).toBe(false)
    expect(math.configSchema.safeParse({ operation: 'pow', values: [1] }).success).toBe(false)
  })
  it('bounds: precision 0-20, 0-10000 values of up to 100 characters, a formula of 1-1000 characters', () => {
    const ok = (config: Record<string, unknown>) => math.configSchema.safeParse(config).success
    expect(ok({ operation: 'sum', values: [1], precision: -1 })).toBe(false)
    expect(ok({ operation: 'sum', values: [1], precision: 0 })).toBe(true)
    expect(ok({ operation: 'sum', values: [1], precision: 20 })).toBe(true)
    expect(ok({ operation: 'sum', values: [1], precision: 21 })).toBe(false)
    expect(ok({ operation: 'sum', values: [1], precision: '20' })).toBe(true)
    expect(ok({ operation: 'sum', values: [1], precision: 1.5 })).toBe(false)
    expect(ok({ operation: 'sum', values: new Array(10_000).fill(1) })).toBe(true)
    expect(ok({ operation: 'sum', values: new Array(10_001).fill(1) })).toBe(false)
    expect(ok({ operation: 'sum', values: ['1'.repeat(100)] })).toBe(true)
    expect(ok({ operation: 'sum', values: ['1'.repeat(101)] })).toBe(false)
    expect(ok({ operation: 'formula', formula: '' })).toBe(false)
    expect(ok({ operation: 'formula', formula: '1' })).toBe(true)
    expect(ok({ operation: 'formula', formula: `1${'+1'.repeat(499)} ` })).toBe(true)
    expect(ok({ operation: 'formula', formula: `1${'+1'.repeat(499)}  ` })).toBe(false)
    expect(ok({ operation: 'round', values: [] })).toBe(false)
    expect(ok({ operation: 'round', values: [1] })).toBe(true)
    expect(ok({ operation: 'sum', values: [1], extra: 1 })).toBe(false)
  })
  it('a formula nests parentheses at most 50 deep', async () => {
    expect(await run({ operation: 'formula', formula: `${'('.repeat(50)}1${')'.repeat(50)}` })).toEqual({ result: 1 })
    await expect(run({ operation: 'formula', formula: `${'('.repeat(51)}1${')'.repeat(51)}` })).rejects.toMatchObject({
      code: 'math_error',
    })
  })
  it('rounds by shifting the decimal point in the text', () => {
    expect(roundTo(1.005, 2, Math.round)).toBe(1.01)
    expect(roundTo(1e-7, 3, Math.round)).toBe(0)
    expect(roundTo(123.456, 20, Math.round)).toBe(123.456)
    expect(roundTo(-0.4, 0, Math.round)).toBe(0)
  })
})
