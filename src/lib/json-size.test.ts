import { describe, expect, it } from 'vitest'
import { jsonSize } from './json-size.js'

describe('jsonSize', () => {
  const exact: unknown[] = [
    null,
    true,
    false,
    0,
    -12.5,
    1e21,
    'abc',
    '',
    [],
    {},
    [1, 'a', null],
    { a: 1, bc: [true, { d: 'e' }] },
    [[[]]],
    [undefined, 1],
  ]
  it.each(exact.map((v) => [JSON.stringify(v), v]))('counts %s as JSON writes it', (_name, value) => {
    expect(jsonSize(value, Infinity)).toBe(JSON.stringify(value).length)
  })
  it('counts pretty-printed JSON with indent', () => {
    const value = { a: [1, { b: 'c' }], d: {} }
    expect(jsonSize(value, Infinity, { indent: true })).toBe(JSON.stringify(value, null, 2).length)
  })
  it('leaves out undefined and function members as JSON does', () => {
    expect(jsonSize({ a: undefined, b: () => 1, c: 1 }, Infinity)).toBe(JSON.stringify({ c: 1 }).length)
  })
  it('counts a value held in many places each time, and gives up just past the limit', () => {
    const big = 'x'.repeat(1_000_000)
    let shared: unknown = [big, big]
    for (let i = 0; i < 40; i++) shared = [shared, shared] // 2^41 copies: far too many to visit
    const size = jsonSize(shared, 10_000_000)
    expect(size).toBeGreaterThan(10_000_000)
    expect(size).toBeLessThan(12_000_000)
  })
  it('walks nesting far deeper than the call stack allows', () => {
    let deep: unknown = 1
    for (let i = 0; i < 200_000; i++) deep = [deep]
    expect(jsonSize(deep, Infinity)).toBe(400_001)
  })
})
