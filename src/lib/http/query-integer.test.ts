import { describe, expect, it } from 'vitest'
import { z } from '@hono/zod-openapi'
import { queryInteger } from './query-integer.js'

describe('queryInteger', () => {
  const page = z.object({ n: queryInteger({ min: 1, max: 100, default: 25 }) })
  const version = z.object({ n: queryInteger({ min: 0 }).optional() })
  const offset = z.object({ n: queryInteger({ min: -10, max: 10 }) })

  it.each([
    ['absent → the default', page, undefined, 25],
    ['digits', page, '16', 16],
    ['leading zeros', page, '007', 7],
    ['the bounds themselves', page, '100', 100],
    ['0 where 0 is allowed', version, '0', 0],
    ['absent and optional', version, undefined, undefined],
    ['a minus where negatives make sense', offset, '-10', -10],
  ] as const)('accepts %s', (_, schema, input, expected) => {
    expect(schema.parse(input === undefined ? {} : { n: input })).toEqual(expected === undefined ? {} : { n: expected })
  })

  it.each([
    ['empty', page, ''],
    ['hex', page, '0x10'],
    ['binary', page, '0b10'],
    ['octal', page, '0o10'],
    ['an exponent', page, '1e1'],
    ['a fraction', page, '1.5'],
    ['a whole number written as a fraction', page, '10.0'],
    ['a plus sign', page, '+5'],
    ['blanks', page, ' 5'],
    ['a trailing blank', page, '5 '],
    ['Infinity', page, 'Infinity'],
    ['non-ASCII digits', page, '١٢'],
    ['below min', page, '0'],
    ['above max', page, '101'],
    ['a minus where negatives make no sense', version, '-1'],
    ['minus zero where negatives make no sense', version, '-0'],
    ['16 digits', version, '1234567890123456'],
    ['a repeated parameter', page, ['1', '2']],
    ['below a negative min', offset, '-11'],
  ] as const)('refuses %s', (_, schema, input) => {
    const result = schema.safeParse({ n: input })
    expect(result.success).toBe(false)
    expect(result.error!.issues[0]!.path).toEqual(['n'])
  })
})
