import { describe, expect, it } from 'vitest'
import { csvField, escapeHtml, escapeMarkdown, renderCsv } from './formats.js'

describe('lens formats: escaping', () => {
  it.each([
    ['<script>alert("x")</script>', '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'],
    ["it's & `code` a=b", 'it&#39;s &amp; &#96;code&#96; a&#61;b'],
    [null, ''],
    [{ a: '<' }, '{&quot;a&quot;:&quot;&lt;&quot;}'],
  ])('html %j', (value, expected) => {
    expect(escapeHtml(value)).toBe(expected)
  })

  it.each([
    ['<img src=x onerror=alert(1)>', '&lt;img src=x onerror=alert\\(1\\)&gt;'],
    ['a | b\nnext row', 'a \\| b next row'],
    ['[link](javascript:x) *bold* _i_ # h', '\\[link\\]\\(javascript:x\\) \\*bold\\* \\_i\\_ \\# h'],
    [-5, '\\-5'],
  ])('markdown %j', (value, expected) => {
    expect(escapeMarkdown(value)).toBe(expected)
  })

  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\0=1+1', "'\0=1+1"],
    ['=HYPERLINK("http://x","y")', '"\'=HYPERLINK(""http://x"",""y"")"'],
    [-1, '-1'],
    [true, 'true'],
    [null, ''],
    [['a', 'b'], '"[""a"",""b""]"'],
  ])('csv %j', (value, expected) => {
    expect(csvField(value)).toBe(expected)
  })

  it('a CSV document: header, rows, CRLF', () => {
    expect(renderCsv(['a', 'b,c'], [{ a: 1, 'b,c': 'x' }, { a: null }])).toBe('a,"b,c"\r\n1,x\r\n,\r\n')
  })
})
