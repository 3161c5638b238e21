import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { checkFilterBounds } from './bounds.js'
import { nestedFilter } from './hostile-filters.js'
import { filterLimits } from './limits.js'
import { parseFilter } from './parse.js'

const refusal = (value: unknown): AppError => {
  try {
    checkFilterBounds(value)
  } catch (err) {
    if (err instanceof AppError) return err
    throw err
  }
  throw new Error('expected a refusal')
}
const nestedArrays = (levels: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < levels; i += 1) value = [value]
  return value
}
const inList = (count: number) => ({ age: { _in: Array.from({ length: count }, (_, i) => i) } })
// About `bytes` of JSON: one string value under a short key.
const ofSize = (bytes: number) => ({
  _or: [
    { a: 'x'.repeat(3000) },
    { b: 'x'.repeat(3000) },
    { c: 'x'.repeat(3000) },
    { d: 'x'.repeat(3000) },
    { e: 'x'.repeat(3000) },
    { f: 'x'.repeat(bytes - 15_000 - 60) },
  ],
})

describe('checkFilterBounds: at the limits', () => {
  it.each([
    { name: 'depth 8 of _and', value: nestedFilter(8, '_and') },
    { name: 'depth 8 mixed, an _in list at the bottom', value: { _and: [nestedFilter(7)] } },
    { name: `_in of ${filterLimits.maxListValues} values`, value: inList(filterLimits.maxListValues) },
    {
      name: `string of ${filterLimits.maxStringLength} characters`,
      value: { name: 'x'.repeat(filterLimits.maxStringLength) },
    },
    { name: 'just under 16 KiB of JSON', value: ofSize(filterLimits.maxJsonBytes - 100) },
    { name: 'the array format', value: [{ field: 'age', op: 'between', value: 1, valueTo: 2 }] },
    { name: 'scalars and empty containers', value: {} },
  ])('passes $name', ({ value }) => {
    expect(() => checkFilterBounds(value)).not.toThrow()
  })

  it('passes the deepest filter the parser takes, an _in list under eight levels', () => {
    let filter: unknown = { age: { _in: [1, 2] } }
    for (let i = 0; i < filterLimits.maxDepth; i += 1) filter = { _or: [filter, { age: 0 }] }
    expect(() => checkFilterBounds(filter)).not.toThrow()
    expect(() => parseFilter(filter)).not.toThrow()
  })
})

describe('checkFilterBounds: past them', () => {
  it.each([
    {
      name: 'depth 9',
      value: nestedFilter(9),
      message: `filter._and[0]._or[0]._and[0]._or[0]._and[0]._or[0]._and[0]._or[0]._and: filter nests deeper than 8 levels`,
    },
    {
      name: 'depth 5,000 of _and',
      value: nestedFilter(5_000, '_and'),
      message: `filter${'._and[0]'.repeat(8)}._and: filter nests deeper than 8 levels`,
    },
    {
      name: 'depth 50,000 of _or',
      value: nestedFilter(50_000, '_or'),
      message: `filter${'._or[0]'.repeat(8)}._or: filter nests deeper than 8 levels`,
    },
    {
      name: 'arrays 50,000 deep',
      value: nestedArrays(50_000),
      message: `filter${'[0]'.repeat(20)}: filter nests deeper than 8 levels`,
    },
    { name: '_in of 501 values', value: inList(501), message: 'filter.age._in: array holds more than 500 items' },
    {
      name: 'a string of 4,097 characters',
      value: { name: 'x'.repeat(4097) },
      message: 'filter.name: string value longer than 4096 characters',
    },
    {
      name: 'a key of 4,097 characters',
      value: { ['k'.repeat(4097)]: 1 },
      message: 'filter: key longer than 4096 characters',
    },
    {
      name: 'over 16 KiB of JSON',
      value: ofSize(filterLimits.maxJsonBytes + 100),
      message: 'filter._or[5].f: filter is larger than 16384 bytes as JSON',
    },
  ])('refuses $name with invalid_request naming where', ({ value, message }) => {
    const err = refusal(value)
    expect(err.code).toBe('invalid_request')
    expect(err.message).toBe(message)
    expect(err.message.startsWith(`${String(err.details.path)}: `)).toBe(true)
  })

  it('stops at the first excess: a million nested levels take no longer than nine', () => {
    const deep = nestedFilter(1_000_000, '_and')
    const started = performance.now()
    expect(() => checkFilterBounds(deep)).toThrow(/nests deeper/)
    expect(performance.now() - started).toBeLessThan(100)
  })

  it('is the first thing parseFilter does, so the parser never sees an over-limit value', () => {
    expect(() => parseFilter(nestedFilter(50_000))).toThrow(/nests deeper than 8 levels/)
    expect(() => parseFilter({ a: 'x'.repeat(100), b: nestedArrays(50_000) })).toThrow(/nests deeper/)
  })
})
