import { describe, expect, it } from 'vitest'
import { isAppError } from '../../lib/errors.js'
import { checkFilterParams, resolveParams, substituteFilter } from './params.js'
import { LensParamSchema } from './schemas.js'

const param = (p: Record<string, unknown>) => LensParamSchema.parse(p)
const declared = [
  param({ name: 'status', values: ['open', 'closed'], default: 'open' }),
  param({ name: 'min', type: 'number' }),
  param({ name: 'n', type: 'integer', required: true }),
  param({ name: 'on', type: 'boolean' }),
  param({ name: 'day', type: 'date' }),
  param({ name: 'q', maxLength: 5 }),
]
const codeOf = (given: Record<string, unknown>) => {
  try {
    resolveParams(declared, given)
    return null
  } catch (err) {
    return isAppError(err) ? err.code : 'thrown'
  }
}

describe('lens parameters', () => {
  it('reads each type, fills defaults, leaves an optional one null', () => {
    expect(resolveParams(declared, { n: '3', min: '-1.5', on: '1', day: '2026-02-28' })).toEqual({
      status: 'open',
      min: -1.5,
      n: 3,
      on: true,
      day: '2026-02-28',
      q: null,
    })
  })

  it.each([
    [{}, 'n missing'],
    [{ n: '1.5' }, 'not an integer'],
    [{ n: '1', min: 'x' }, 'not a number'],
    [{ n: '1', status: 'pending' }, 'outside values'],
    [{ n: '1', on: 'yes' }, 'not a boolean'],
    [{ n: '1', day: '2026-02-30' }, 'no such day'],
    [{ n: '1', q: 'toolong' }, 'too long'],
    [{ n: '1', other: 'x' }, 'undeclared'],
    [{ n: ['1', '2'] }, 'repeated'],
  ] as [Record<string, unknown>, string][])('%j is refused (%s)', (given, why) => {
    expect(codeOf(given), why).toBe('invalid_request')
  })

  it('substitutes values only: a whole tag keeps the type, keys are never templates', () => {
    const filter = { total: { _gte: '{{params.min}}' }, title: { _contains: 'x{{params.q}}' }, '{{params.q}}': 1 }
    expect(substituteFilter(filter, { min: 2, q: '"}' })).toEqual({
      total: { _gte: 2 },
      title: { _contains: 'x"}' },
      '{{params.q}}': 1,
    })
  })

  it('a filter reads declared params only', () => {
    expect(() => checkFilterParams({ a: { _eq: '{{params.min}}' } }, declared)).not.toThrow()
    for (const filter of [
      { a: '{{params.zzz}}' },
      { a: '{{$now}}' },
      { a: '{{params.min.x}}' },
      { a: '{{= 1 }}' },
      { a: '{{' },
    ]) {
      expect(() => checkFilterParams(filter, declared), JSON.stringify(filter)).toThrow(/filter/)
    }
  })
})
