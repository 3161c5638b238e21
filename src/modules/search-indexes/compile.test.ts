import { describe, expect, it } from 'vitest'
import { columnsOf, markClose, markOpen, textOf } from './compile.js'
import { snippetHtml } from './query.js'

describe('columnsOf', () => {
  it('one FTS5 column per distinct field name across sources, in name order; never a field name', () => {
    expect(
      columnsOf([
        { collection: 'a', fields: ['title', 'body'] },
        { collection: 'b', fields: ['title', 'text'] },
      ]),
    ).toEqual({ body: 'c0', text: 'c1', title: 'c2' })
    expect(columnsOf([{ collection: 'a', fields: ['x); drop table meta; --'] }])).toEqual({
      'x); drop table meta; --': 'c0',
    })
  })
})

describe('textOf', () => {
  it.each([
    [null, ''],
    [undefined, ''],
    ['plain', 'plain'],
    [42, '42'],
    [true, 'true'],
    [['a', 1, null, ['b']], 'a 1 b'],
    [{ en: 'Hello', fi: 'Hei' }, 'Hello Hei'],
    [`forged ${markOpen}mark${markClose}`, 'forged  mark '],
  ])('%j → %j', (value, expected) => {
    expect(textOf(value)).toBe(expected)
  })
})

describe('snippetHtml', () => {
  it("escapes the record's text and turns the marks into <mark>", () => {
    expect(snippetHtml(`<b>"x" & 'y'</b> ${markOpen}aurora${markClose}`)).toBe(
      '&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt; <mark>aurora</mark>',
    )
  })
})
