import { describe, expect, it } from 'vitest'
import { jsonErrorOffset } from './json-position.js'

describe('jsonErrorOffset', () => {
  it.each(['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "x\\n\\u00e9"], "b": {}} ', '"s"', '0'])(
    'valid JSON %j → -1 (and JSON.parse agrees)',
    (text) => {
      expect(() => JSON.parse(text)).not.toThrow()
      expect(jsonErrorOffset(text)).toBe(-1)
    },
  )

  it.each([
    ['{"a": ,}', 6],
    ['{"a": 1,}', 8],
    ['[1 2]', 3],
    ['{a: 1}', 1],
    ['{"a" 1}', 5],
    ['[01]', 2],
    ['"\\x"', 1],
    ['"open', 5],
    ['{"a": 1}}', 8],
    ['[', 1],
    ['', 0],
    ['{"a": tru}', 6],
  ])('%j fails at %i (and JSON.parse refuses it)', (text, offset) => {
    expect(() => JSON.parse(text)).toThrow()
    expect(jsonErrorOffset(text)).toBe(offset)
  })
})
