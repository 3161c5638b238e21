import { describe, expect, it } from 'vitest'
import type { FieldDef } from '../collections/index.js'
import { cellValue, systemValue, unguard } from './csv-values.js'

const field = (type: string, extra: Partial<FieldDef> = {}): FieldDef =>
  ({ name: 'f', type, required: false, unique: false, indexed: false, ...extra }) as FieldDef
const hasMany = field('relation', { relationConfig: { targetCollection: 't', relationType: 'hasMany' } } as never)
const belongsTo = field('relation', { relationConfig: { targetCollection: 't', relationType: 'belongsTo' } } as never)

describe('cellValue', () => {
  const rows: [string, FieldDef, string, unknown][] = [
    ['empty is null', field('text'), '', null],
    ['text as is', field('text'), '  spaced, "quoted"  ', '  spaced, "quoted"  '],
    ['integer trimmed', field('integer'), ' 42 ', 42],
    ['negative number', field('number'), '-1.5e3', -1500],
    ['decimal', field('decimal'), '.5', 0.5],
    ['hex is left as text', field('integer'), '0x10', '0x10'],
    ['Infinity is left as text', field('number'), 'Infinity', 'Infinity'],
    ['boolean yes', field('boolean'), 'YES', true],
    ['boolean 0', field('boolean'), '0', false],
    ['boolean other', field('boolean'), 'maybe', 'maybe'],
    ['datetime seconds', field('datetime'), '1790000000', 1790000000],
    ['datetime ISO with zone', field('datetime'), '1970-01-01T00:01:00.900Z', 60],
    ['datetime without zone', field('datetime'), '2026-05-01T07:00', '2026-05-01T07:00'],
    ['date as is', field('date'), '2026-05-01', '2026-05-01'],
    ['json object', field('json'), '{"a":[1]}', { a: [1] }],
    ['json number', field('json'), '42', 42],
    ['json words are a string', field('json'), 'plain words', 'plain words'],
    ['multi_enum JSON', field('multi_enum'), '["a","b"]', ['a', 'b']],
    ['multi_enum commas', field('multi_enum'), 'a, b,,', ['a', 'b']],
    ['hasMany commas', hasMany, 'x1,x2', ['x1', 'x2']],
    ['belongsTo id trimmed', belongsTo, ' x1 ', 'x1'],
    ['geo JSON', field('geo'), '{"type":"Point","coordinates":[1,2]}', { type: 'Point', coordinates: [1, 2] }],
    ['translatable map', field('text', { translatable: true }), '{"en":"Hi"}', { en: 'Hi' }],
    ['translatable text', field('text', { translatable: true }), '{draft} Hi', '{draft} Hi'],
  ]
  it.each(rows)('%s', (_name, def, cell, expected) => {
    expect(cellValue(def, cell)).toEqual(expected)
  })

  it.each([
    ['json', field('json'), '{"a":'],
    ['json string', field('json'), '"open'],
    ['list', field('multi_enum'), '["a",'],
  ])('refuses JSON-looking text that is not JSON (%s)', (_name, def, cell) => {
    expect(() => cellValue(def, cell)).toThrow(expect.objectContaining({ code: 'invalid_field' }))
  })
})

describe('unguard and systemValue', () => {
  it.each([
    ["'=SUM(A1)", '=SUM(A1)'],
    ["'+33", '+33'],
    ["'-x", '-x'],
    ["'@a", '@a'],
    ["'\tx", '\tx'],
    ["'plain", "'plain"],
    ['=raw', '=raw'],
  ])('%j → %j', (cell, expected) => {
    expect(unguard(cell)).toBe(expected)
  })

  it('reads ids as text and times as Unix seconds; empty is absent', () => {
    expect(systemValue('id', ' abc ')).toBe('abc')
    expect(systemValue('created_at', '1790000000')).toBe(1790000000)
    expect(systemValue('updated_at', '1970-01-01T00:00:10Z')).toBe(10)
    expect(systemValue('created_at', 'soon')).toBe('soon')
    expect(systemValue('id', '')).toBeUndefined()
  })
})
