import { describe, expect, it } from 'vitest'
import { jsonValueCount, JsonTooLarge, parseJsonBounded, valueWeight } from './json-bounds.js'

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
