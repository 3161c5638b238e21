import { describe, expect, it } from 'vitest'
import type { FieldDef, FieldTypeName, ValueKind } from './field-def.js'
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

type Row = [label: string, field: FieldDef, sqlite: string | null, postgres: string | null, kind: ValueKind]

const rows: Row[] = [
  ['text', def('text'), 'TEXT', 'text', 'text'],
  ['translatable text', def('text', { translatable: true }), 'TEXT', 'jsonb', 'json'],
  ['richtext', def('richtext'), 'TEXT', 'text', 'text'],
  ['translatable richtext', def('richtext', { translatable: true }), 'TEXT', 'jsonb', 'json'],
  ['email', def('email'), 'TEXT', 'text', 'text'],
  ['url', def('url'), 'TEXT', 'text', 'text'],
  ['phone', def('phone'), 'TEXT', 'text', 'text'],
  ['slug', def('slug'), 'TEXT', 'text', 'text'],
  ['translatable slug', def('slug', { translatable: true }), 'TEXT', 'jsonb', 'json'],
  ['uuid', def('uuid'), 'TEXT', 'text', 'text'],
  ['integer', def('integer'), 'INTEGER', 'bigint', 'integer'],
  ['decimal', def('decimal'), 'NUMERIC', 'numeric', 'number'],
  ['number', def('number'), 'REAL', 'double precision', 'number'],
  ['boolean', def('boolean'), 'INTEGER', 'boolean', 'boolean'],
  ['date', def('date'), 'TEXT', 'text', 'text'],
  ['datetime', def('datetime'), 'INTEGER', 'bigint', 'integer'],
  ['enum', def('enum', { enumValues: ['a'] }), 'TEXT', 'text', 'text'],
  ['multi_enum', def('multi_enum', { enumValues: ['a'] }), 'TEXT', 'jsonb', 'json'],
  ['json', def('json'), 'TEXT', 'jsonb', 'json'],
  ['relation belongsTo', def('relation', belongsTo), 'TEXT', 'text', 'text'],
  ['relation hasMany', def('relation', hasMany), 'TEXT', 'jsonb', 'json'],
  ['file', def('file'), 'TEXT', 'text', 'text'],
  ['geo', def('geo'), 'TEXT', 'jsonb', 'json'],
  ['lookup of a boolean', def('lookup', { resultType: 'boolean' }), null, null, 'boolean'],
  ['lookup of a date', def('lookup', { resultType: 'date' }), null, null, 'text'],
  ['rollup count', def('rollup', { resultType: 'integer' }), null, null, 'integer'],
  ['rollup avg', def('rollup', { resultType: 'number' }), null, null, 'number'],
]

describe('column types and value kinds', () => {
  it.each(rows)('%s', (_label, field, sqlite, postgres, kind) => {
    const type = fieldTypeOf(field.type)
    expect(type.column(field, 'sqlite')).toBe(sqlite)
    expect(type.column(field, 'postgres')).toBe(postgres)
    expect(type.valueKind(field)).toBe(kind)
  })

  it('covers every type', () => {
    const covered = new Set(rows.map(([, field]) => field.type))
    expect(fieldTypes.filter((t) => !covered.has(t.type))).toEqual([])
  })
})
