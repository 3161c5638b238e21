import { describe, expect, it } from 'vitest'
import type { Dialect, FieldDef, FieldTypeName } from './field-def.js'
import { fieldTypeOf, fieldTypes } from './registry.js'

const def = (type: FieldTypeName, over: Partial<FieldDef> = {}): FieldDef => ({
  name: 'f',
  type,
  required: false,
  unique: false,
  indexed: false,
  ...over,
})
const belongsTo = {
  relationConfig: { targetCollection: 'people', relationType: 'belongsTo', onDelete: 'set-null' },
} as const
const hasMany = {
  relationConfig: { targetCollection: 'people', relationType: 'hasMany', onDelete: 'set-null' },
} as const
const point = { type: 'Point', coordinates: [1, 2] }

type Row = [label: string, field: FieldDef, dialect: Dialect, stored: unknown, api: unknown]

const rows: Row[] = [
  ['null stays null', def('boolean'), 'sqlite', null, null],
  ['undefined becomes null', def('text'), 'postgres', undefined, null],
  ['text', def('text'), 'sqlite', 'hi', 'hi'],
  ['text that looks like JSON stays text', def('text'), 'sqlite', '{"en":"Hi"}', '{"en":"Hi"}'],
  ['translatable text, SQLite', def('text', { translatable: true }), 'sqlite', '{"en":"Hi"}', { en: 'Hi' }],
  ['translatable text, PostgreSQL', def('text', { translatable: true }), 'postgres', { en: 'Hi' }, { en: 'Hi' }],
  ['richtext', def('richtext'), 'postgres', '<p>x</p>', '<p>x</p>'],
  ['email', def('email'), 'sqlite', 'a@b.co', 'a@b.co'],
  ['url', def('url'), 'sqlite', 'https://x.org', 'https://x.org'],
  ['phone', def('phone'), 'sqlite', '+1 555', '+1 555'],
  ['slug', def('slug'), 'sqlite', 'a-b', 'a-b'],
  ['uuid', def('uuid'), 'postgres', '123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
  ['integer, SQLite', def('integer'), 'sqlite', 42, 42],
  ['integer, SQLite bigint', def('integer'), 'sqlite', 42n, 42],
  ['integer, PostgreSQL', def('integer'), 'postgres', 42, 42],
  ['integer, PostgreSQL text', def('integer'), 'postgres', '42', 42],
  ['decimal, SQLite', def('decimal'), 'sqlite', 19.99, 19.99],
  ['decimal, PostgreSQL numeric text', def('decimal'), 'postgres', '19.99', 19.99],
  ['decimal, PostgreSQL negative exponent', def('decimal'), 'postgres', '-1.5e-7', -1.5e-7],
  ['number, SQLite', def('number'), 'sqlite', 1.5, 1.5],
  ['number, PostgreSQL', def('number'), 'postgres', 1.5, 1.5],
  ['boolean, SQLite 1', def('boolean'), 'sqlite', 1, true],
  ['boolean, SQLite 0', def('boolean'), 'sqlite', 0, false],
  ['boolean, SQLite bigint 1', def('boolean'), 'sqlite', 1n, true],
  ['boolean, PostgreSQL true', def('boolean'), 'postgres', true, true],
  ['boolean, PostgreSQL false', def('boolean'), 'postgres', false, false],
  ['date', def('date'), 'postgres', '2024-02-29', '2024-02-29'],
  ['datetime, SQLite', def('datetime'), 'sqlite', 1_700_000_000, 1_700_000_000],
  ['datetime, PostgreSQL', def('datetime'), 'postgres', 1_700_000_000, 1_700_000_000],
  ['enum', def('enum', { enumValues: ['a'] }), 'sqlite', 'a', 'a'],
  ['multi_enum, SQLite', def('multi_enum', { enumValues: ['a', 'b'] }), 'sqlite', '["a","b"]', ['a', 'b']],
  ['multi_enum, PostgreSQL', def('multi_enum', { enumValues: ['a', 'b'] }), 'postgres', ['a', 'b'], ['a', 'b']],
  ['json object, SQLite', def('json'), 'sqlite', '{"a":1}', { a: 1 }],
  ['json string, SQLite', def('json'), 'sqlite', '"abc"', 'abc'],
  ['json number, SQLite', def('json'), 'sqlite', '5', 5],
  ['json broken TEXT, SQLite', def('json'), 'sqlite', 'not json', 'not json'],
  ['json object, PostgreSQL', def('json'), 'postgres', { a: 1 }, { a: 1 }],
  ['json string, PostgreSQL', def('json'), 'postgres', '{"a":1}', '{"a":1}'],
  ['relation belongsTo', def('relation', belongsTo), 'sqlite', 'r1', 'r1'],
  ['relation hasMany, SQLite', def('relation', hasMany), 'sqlite', '["r1","r2"]', ['r1', 'r2']],
  ['relation hasMany, PostgreSQL', def('relation', hasMany), 'postgres', ['r1', 'r2'], ['r1', 'r2']],
  ['file', def('file'), 'sqlite', '0123456789abcdef0123456789abcdef', '0123456789abcdef0123456789abcdef'],
  ['geo, SQLite', def('geo'), 'sqlite', JSON.stringify(point), point],
  ['geo, PostgreSQL', def('geo'), 'postgres', point, point],
  ['lookup of a boolean, SQLite', def('lookup', { resultType: 'boolean' }), 'sqlite', 1, true],
  ['lookup of a boolean, PostgreSQL', def('lookup', { resultType: 'boolean' }), 'postgres', false, false],
  ['lookup of a json, SQLite', def('lookup', { resultType: 'json' }), 'sqlite', '{"a":1}', { a: 1 }],
  ['lookup of a decimal, PostgreSQL', def('lookup', { resultType: 'decimal' }), 'postgres', '2.50', 2.5],
  ['lookup of a text', def('lookup', { resultType: 'text' }), 'postgres', '12', '12'],
  ['rollup count, PostgreSQL', def('rollup', { resultType: 'integer' }), 'postgres', 3, 3],
  ['rollup avg, PostgreSQL numeric text', def('rollup', { resultType: 'number' }), 'postgres', '2.5', 2.5],
  ['rollup sum, SQLite', def('rollup', { resultType: 'decimal' }), 'sqlite', 7.25, 7.25],
  ['rollup max of dates', def('rollup', { resultType: 'date' }), 'sqlite', '2024-01-01', '2024-01-01'],
]

describe('read', () => {
  it.each(rows)('%s', (_label, field, dialect, stored, api) => {
    expect(fieldTypeOf(field.type).read(stored, field, dialect)).toEqual(api)
  })

  it('covers every type', () => {
    const covered = new Set(rows.map(([, field]) => field.type))
    expect(fieldTypes.filter((t) => !covered.has(t.type)).map((t) => t.type)).toEqual([])
  })

  it('round-trips what write stores through SQLite TEXT and PostgreSQL jsonb', () => {
    const cases: [FieldDef, unknown][] = [
      [def('json'), 'a string'],
      [def('json'), { nested: [1, { b: null }] }],
      [def('multi_enum', { enumValues: ['a', 'b'] }), ['b']],
      [def('geo'), point],
      [def('text', { translatable: true }), { en: 'x' }],
      [def('relation', hasMany), ['r1']],
    ]
    for (const [field, value] of cases) {
      const type = fieldTypeOf(field.type)
      const stored = type.write(value, field)
      // What each store does: TEXT holds JSON.stringify, jsonb hands back the parsed value.
      expect(type.read(JSON.stringify(stored), field, 'sqlite')).toEqual(value)
      expect(type.read(structuredClone(stored), field, 'postgres')).toEqual(value)
    }
  })
})
