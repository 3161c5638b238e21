import { describe, expect, it } from 'vitest'
import { csvCell, csvLine } from './export.js'

// CSV cells (RFC 4180) and the formula guard, as pure functions: value in, text out.

describe('csvCell', () => {
  const rows: [string, unknown, string][] = [
    ['null is empty', null, ''],
    ['undefined is empty', undefined, ''],
    ['plain text as it is', 'hello', 'hello'],
    ['the empty string', '', ''],
    ['a comma quotes the cell', 'a,b', '"a,b"'],
    ['quotes are doubled inside quotes', 'say "hi"', '"say ""hi"""'],
    ['a line feed quotes the cell', 'a\nb', '"a\nb"'],
    ['a carriage return quotes the cell', 'a\rb', '"a\rb"'],
    ['an integer', 42, '42'],
    ['a negative number is a value, not a formula', -5, '-5'],
    ['a decimal', 9.5, '9.5'],
    ['true', true, 'true'],
    ['false', false, 'false'],
    ['an object as JSON text, quoted for its commas and quotes', { a: 1, b: 'x' }, '"{""a"":1,""b"":""x""}"'],
    ['an array as JSON text', [1, 2], '"[1,2]"'],
    ['a one-element array needs no quotes', [1], '[1]'],
    ['= is guarded', '=1+1', "'=1+1"],
    ['+ is guarded', '+33 1 23', "'+33 1 23"],
    ['- is guarded in text', '-10', "'-10"],
    ['@ is guarded', '@SUM(A1)', "'@SUM(A1)"],
    ['a leading tab is guarded', '\tx', "'\tx"],
    ['a leading carriage return is guarded and quoted', '\r=x', `"'\r=x"`],
    ['a guarded cell with a comma is guarded then quoted', '=HYPERLINK("x","y")', `"'=HYPERLINK(""x"",""y"")"`],
    ['= elsewhere is left alone', 'a=b', 'a=b'],
    ['unicode passes through', 'ünï ✓', 'ünï ✓'],
  ]
  for (const [name, value, want] of rows) {
    it(name, () => expect(csvCell(value)).toBe(want))
  }
})

describe('csvLine', () => {
  it('joins cells with commas and ends with CRLF', () => {
    expect(csvLine(['a', 1, null, 'b,c'])).toBe('a,1,,"b,c"\r\n')
  })
  it('a single empty cell is an empty line', () => {
    expect(csvLine([null])).toBe('\r\n')
  })
})
