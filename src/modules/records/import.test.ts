import { describe, expect, it } from 'vitest'
import { ndjsonLines } from './import.js'

// Splitting an NDJSON body: non-empty lines, numbered as they stand in the body, at most `limit`.

describe('ndjsonLines', () => {
  const rows: [string, string, number, { line: number; text: string }[], boolean][] = [
    ['one line', '{"a":1}', 10, [{ line: 1, text: '{"a":1}' }], false],
    ['a trailing newline adds nothing', '{"a":1}\n', 10, [{ line: 1, text: '{"a":1}' }], false],
    ['blank lines are skipped but counted', '\n{"a":1}\n\n  \n{"b":2}', 10, [{ line: 2, text: '{"a":1}' }, { line: 5, text: '{"b":2}' }], false],
    ['CRLF line ends', '{"a":1}\r\n{"b":2}\r\n', 10, [{ line: 1, text: '{"a":1}' }, { line: 2, text: '{"b":2}' }], false],
    ['surrounding spaces are trimmed', '  {"a":1}\t', 10, [{ line: 1, text: '{"a":1}' }], false],
    ['a byte order mark is dropped', '\ufeff{"a":1}', 10, [{ line: 1, text: '{"a":1}' }], false],
    ['the empty body', '', 10, [], false],
    ['only blank lines', '\n\r\n  \n', 10, [], false],
    ['exactly the limit is not truncated', 'a\nb\n\n', 2, [{ line: 1, text: 'a' }, { line: 2, text: 'b' }], false],
    ['more than the limit is truncated', 'a\nb\n\nc', 2, [{ line: 1, text: 'a' }, { line: 2, text: 'b' }], true],
  ]
  for (const [name, body, limit, lines, truncated] of rows) {
    it(name, () => expect(ndjsonLines(body, limit)).toEqual({ lines, truncated }))
  }
})
