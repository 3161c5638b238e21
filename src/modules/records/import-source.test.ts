import { describe, expect, it } from 'vitest'
import { chunkKey, ndjsonLines } from './import-source.js'

// Splitting an NDJSON body: non-empty lines, numbered as they stand in the body, at most `limit`. A chunk's
// identity within its job: the same request again is the same chunk, any other body or locale is another.

describe('ndjsonLines', () => {
  const rows: [string, string, number, { line: number; text: string }[], boolean][] = [
    ['one line', '{"a":1}', 10, [{ line: 1, text: '{"a":1}' }], false],
    ['a trailing newline adds nothing', '{"a":1}\n', 10, [{ line: 1, text: '{"a":1}' }], false],
    [
      'blank lines are skipped but counted',
      '\n{"a":1}\n\n  \n{"b":2}',
      10,
      [
        { line: 2, text: '{"a":1}' },
        { line: 5, text: '{"b":2}' },
      ],
      false,
    ],
    [
      'CRLF line ends',
      '{"a":1}\r\n{"b":2}\r\n',
      10,
      [
        { line: 1, text: '{"a":1}' },
        { line: 2, text: '{"b":2}' },
      ],
      false,
    ],
    ['surrounding spaces are trimmed', '  {"a":1}\t', 10, [{ line: 1, text: '{"a":1}' }], false],
    ['a byte order mark is dropped', '\ufeff{"a":1}', 10, [{ line: 1, text: '{"a":1}' }], false],
    ['the empty body', '', 10, [], false],
    ['only blank lines', '\n\r\n  \n', 10, [], false],
    [
      'exactly the limit is not truncated',
      'a\nb\n\n',
      2,
      [
        { line: 1, text: 'a' },
        { line: 2, text: 'b' },
      ],
      false,
    ],
    [
      'more than the limit is truncated',
      'a\nb\n\nc',
      2,
      [
        { line: 1, text: 'a' },
        { line: 2, text: 'b' },
      ],
      true,
    ],
  ]
  for (const [name, body, limit, lines, truncated] of rows) {
    it(name, () => expect(ndjsonLines(body, limit)).toEqual({ lines, truncated }))
  }
})

describe('chunkKey', () => {
  const key = chunkKey('{"a":1}\n{"b":2}', undefined)
  it('is the same for the same body and locale', () => expect(chunkKey('{"a":1}\n{"b":2}', undefined)).toBe(key))
  it('is a SHA-256 in hex', () => expect(key).toMatch(/^[0-9a-f]{64}$/))
  const others: [string, string, string | undefined][] = [
    ['another line order', '{"b":2}\n{"a":1}', undefined],
    ['a trailing newline', '{"a":1}\n{"b":2}\n', undefined],
    ['a locale', '{"a":1}\n{"b":2}', 'fr'],
  ]
  for (const [name, body, locale] of others)
    it(`differs with ${name}`, () => expect(chunkKey(body, locale)).not.toBe(key))
})
