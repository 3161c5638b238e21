import { describe, expect, it } from 'vitest'
import {
  jsonTextNestsBeyond,
  jsonValueCount,
  JsonTooDeep,
  JsonTooLarge,
  nestingBeyond,
  parseJsonBounded,
  valueWeight,
} from './json-bounds.js'

describe('jsonValueCount', () => {
  it.each([
    ['[1,2,3]', 3],
    ['{"a":1,"b":[2,3]}', 6],
    // Brackets, commas and colons inside strings are text, escaped quotes included.
    ['["[,{:", "a\\"[,]"]', 2],
    ['"just text, {with} [signs]: here"', 0],
  ])('%s holds about %i separators and containers', (text, expected) => {
    expect(jsonValueCount(text, 100)).toBe(expected)
  })

  it('stops counting once past the limit', () => {
    expect(jsonValueCount('[' + '[],'.repeat(1000) + '[]]', 100)).toBe(101)
  })
})

describe('parseJsonBounded', () => {
  it('parses JSON within the limit and refuses more values before building anything', () => {
    expect(parseJsonBounded('{"a":[1,2]}', 10)).toEqual({ a: [1, 2] })
    const bomb = '[' + '[],'.repeat(50) + '[]]'
    expect(() => parseJsonBounded(bomb, 10)).toThrow(JsonTooLarge)
    expect(() => parseJsonBounded('{nope', 10)).toThrow(SyntaxError)
  })
})

describe('valueWeight', () => {
  it('grows with the values held and stops walking past the limit', () => {
    const small = valueWeight({ a: 'x' })
    const big = valueWeight({ a: 'x'.repeat(1000), list: Array.from({ length: 100 }, () => ({})) })
    expect(big).toBeGreaterThan(small + 2000)
    const huge = Array.from({ length: 100_000 }, () => [])
    expect(valueWeight(huge, 1000)).toBeGreaterThan(1000)
    expect(valueWeight(huge, 1000)).toBeLessThan(valueWeight(huge))
  })
})

describe('nestingBeyond', () => {
  const nested = (levels: number): unknown => {
    let value: unknown = { leaf: 1 }
    for (let i = 0; i < levels; i += 1) value = { _and: [value] }
    return value
  }

  it('answers null within the bound, and the path of the first container past it', () => {
    expect(nestingBeyond({ a: [1, { b: 2 }] }, 2)).toBeNull()
    expect(nestingBeyond({ a: [1, { b: {} }] }, 2)).toEqual(['a', 1, 'b'])
    expect(nestingBeyond('text', 0)).toBeNull()
    expect(nestingBeyond({}, 0)).toBeNull()
    expect(nestingBeyond({ a: [] }, 0)).toEqual(['a'])
  })

  it('walks 50,000 levels without the call stack and stops at the bound', () => {
    const path = nestingBeyond(nested(50_000), 64)
    expect(path).toHaveLength(65)
    expect(path!.slice(0, 3)).toEqual(['_and', 0, '_and'])
  })
})

describe('jsonTextNestsBeyond and parseJsonBounded (nesting)', () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`
  it('counts containers outside strings, up to the bound inclusive', () => {
    expect(jsonTextNestsBeyond(nested(256))).toBe(false)
    expect(jsonTextNestsBeyond(nested(257))).toBe(true)
    expect(jsonTextNestsBeyond(`{"a":"${'['.repeat(5000)}"}`)).toBe(false)
    expect(jsonTextNestsBeyond(`{"a":"\\"${'['.repeat(5000)}"}`)).toBe(false)
    expect(jsonTextNestsBeyond(`[${'[],'.repeat(5000)}[]]`)).toBe(false)
  })
  it('parseJsonBounded refuses a text nested past 256 levels with JsonTooDeep, a JsonTooLarge', () => {
    expect(() => parseJsonBounded(nested(50_000))).toThrow(JsonTooDeep)
    expect(() => parseJsonBounded(nested(50_000))).toThrow(JsonTooLarge)
    expect(() => parseJsonBounded(nested(50_000))).toThrow('The JSON nests deeper than 256 levels')
    expect(parseJsonBounded(nested(256))).toBeInstanceOf(Array)
  })
})
