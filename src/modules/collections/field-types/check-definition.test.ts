import { describe, expect, it } from 'vitest'
import type { DefinitionContext, FieldDef, FieldTypeName, StoredTypeName } from './field-def.js'
import { fieldTypeOf } from './registry.js'

const def = (type: FieldTypeName, over: Partial<FieldDef> = {}): FieldDef => ({
  name: 'f',
  type,
  required: false,
  unique: false,
  indexed: false,
  ...over,
})
const rel = (
  name: string,
  relationType: 'belongsTo' | 'hasMany',
  targetCollection = 'people',
  over: Partial<FieldDef> = {},
): FieldDef =>
  def('relation', { name, relationConfig: { targetCollection, relationType, onDelete: 'set-null' }, ...over })

// The project: `people` exists; the collection being defined is `orders`.
const people: FieldDef[] = [
  def('text', { name: 'name' }),
  def('integer', { name: 'age' }),
  def('decimal', { name: 'score' }),
  def('number', { name: 'ratio' }),
  def('date', { name: 'born' }),
  def('datetime', { name: 'seen_at' }),
  def('boolean', { name: 'active' }),
  def('text', { name: 'bio', translatable: true }),
  rel('friend', 'belongsTo'),
  rel('friends', 'hasMany'),
  def('lookup', {
    name: 'friend_name',
    lookupConfig: { relationField: 'friend', targetField: 'name' },
    resultType: 'text',
  }),
]
const orderFields: FieldDef[] = [
  rel('owner', 'belongsTo'),
  rel('members', 'hasMany'),
  rel('parent', 'belongsTo', 'orders'),
  rel('children', 'hasMany', 'orders'),
  def('integer', { name: 'qty' }),
]

const contextFor = (field: FieldDef): DefinitionContext => ({
  collection: 'orders',
  fields: [...orderFields, field],
  collections: new Map([
    ['people', people],
    ['orders', []],
  ]),
})

const check = (field: FieldDef): string[] => fieldTypeOf(field.type).checkDefinition(field, contextFor(field))
const derive = (field: FieldDef): StoredTypeName | null =>
  fieldTypeOf(field.type).deriveResultType(field, contextFor(field))
const lookup = (relationField: string, targetField: string, over: Partial<FieldDef> = {}) =>
  def('lookup', { lookupConfig: { relationField, targetField }, ...over })
const rollup = (fn: 'count' | 'sum' | 'avg' | 'min' | 'max', targetField?: string, relationField = 'members') =>
  def('rollup', {
    rollupConfig:
      targetField === undefined ? { relationField, function: fn } : { relationField, function: fn, targetField },
  })

type Row = [label: string, field: FieldDef, problem: RegExp | null]

const rows: Row[] = [
  ['plain text', def('text'), null],
  // enum and multi_enum
  ['enum without enumValues', def('enum'), /needs a non-empty enumValues/],
  ['enum with empty enumValues', def('enum', { enumValues: [] }), /needs a non-empty enumValues/],
  ['enum with a repeated value', def('enum', { enumValues: ['a', 'a'] }), /lists "a" twice/],
  ['enum with an empty string', def('enum', { enumValues: [''] }), /strings of 1 to 200/],
  [
    'enum with too many values',
    def('enum', { enumValues: Array.from({ length: 1001 }, (_, i) => `v${i}`) }),
    /at most 1000/,
  ],
  ['enum', def('enum', { enumValues: ['a', 'b'] }), null],
  ['multi_enum without enumValues', def('multi_enum'), /needs a non-empty enumValues/],
  ['multi_enum', def('multi_enum', { enumValues: ['a'] }), null],
  ['enumValues on text', def('text', { enumValues: ['a'] }), /enumValues does not apply to type text/],
  // relation
  ['relation without relationConfig', def('relation'), /needs relationConfig/],
  ['relation to an unknown collection', rel('f', 'belongsTo', 'ghosts'), /"ghosts" is not a collection/],
  ['relation to itself', rel('f', 'belongsTo', 'orders'), null],
  ['relation to people', rel('f', 'hasMany'), null],
  [
    'relation with a displayField',
    rel('f', 'belongsTo', 'people', {
      relationConfig: {
        targetCollection: 'people',
        relationType: 'belongsTo',
        onDelete: 'cascade',
        displayField: 'name',
      },
    }),
    null,
  ],
  [
    'relation with displayField id',
    rel('f', 'belongsTo', 'people', {
      relationConfig: {
        targetCollection: 'people',
        relationType: 'belongsTo',
        onDelete: 'set-null',
        displayField: 'id',
      },
    }),
    null,
  ],
  [
    'relation with an unknown displayField',
    rel('f', 'belongsTo', 'people', {
      relationConfig: {
        targetCollection: 'people',
        relationType: 'belongsTo',
        onDelete: 'set-null',
        displayField: 'nope',
      },
    }),
    /displayField "nope" is not a field/,
  ],
  [
    'relationConfig on text',
    def('text', { relationConfig: { targetCollection: 'people', relationType: 'belongsTo', onDelete: 'set-null' } }),
    /relationConfig does not apply/,
  ],
  // lookup
  ['lookup without lookupConfig', def('lookup'), /needs lookupConfig/],
  ['lookup through a missing field', lookup('nope', 'name'), /"nope" is not a belongsTo relation field/],
  ['lookup through a plain field', lookup('qty', 'name'), /"qty" is not a belongsTo relation field/],
  ['lookup through a hasMany', lookup('members', 'name'), /"members" is not a belongsTo relation field/],
  ['lookup of a missing target field', lookup('owner', 'nope'), /"nope" is not a field of people/],
  ['lookup of a lookup', lookup('owner', 'friend_name'), /is computed/],
  ['lookup of a translatable field', lookup('owner', 'bio'), /translatable/],
  ['lookup of a hasMany relation', lookup('owner', 'friends'), /hasMany relation/],
  ['lookup of a belongsTo relation', lookup('owner', 'friend'), null],
  ['lookup of a text', lookup('owner', 'name'), null],
  ['lookup through a self relation', lookup('parent', 'qty'), null],
  ['lookup that is required', lookup('owner', 'name', { required: true }), /cannot be required/],
  ['lookup that is unique', lookup('owner', 'name', { unique: true }), /cannot be unique/],
  ['lookup that is indexed', lookup('owner', 'name', { indexed: true }), /cannot be indexed/],
  ['lookup with a default', lookup('owner', 'name', { defaultValue: 'x' }), /cannot have a defaultValue/],
  [
    'lookupConfig on text',
    def('text', { lookupConfig: { relationField: 'owner', targetField: 'name' } }),
    /lookupConfig does not apply/,
  ],
  // rollup
  ['rollup without rollupConfig', def('rollup'), /needs rollupConfig/],
  ['rollup over a belongsTo', rollup('count', undefined, 'owner'), /"owner" is not a hasMany relation field/],
  ['rollup count', rollup('count'), null],
  ['rollup count of a field', rollup('count', 'name'), null],
  ['rollup sum without targetField', rollup('sum'), /targetField is required for sum/],
  ['rollup sum of a missing field', rollup('sum', 'nope'), /"nope" is not a field of people/],
  ['rollup sum of text', rollup('sum', 'name'), /sum needs one of integer, decimal, number/],
  ['rollup sum of a date', rollup('sum', 'born'), /sum needs one of/],
  ['rollup avg of a boolean', rollup('avg', 'active'), /avg needs one of/],
  ['rollup sum of a decimal', rollup('sum', 'score'), null],
  ['rollup min of a datetime', rollup('min', 'seen_at'), null],
  ['rollup max of a date', rollup('max', 'born'), null],
  ['rollup of a lookup', rollup('count', 'friend_name'), /is computed/],
  ['rollup over a self relation', rollup('sum', 'qty', 'children'), null],
  [
    'rollup that is indexed',
    def('rollup', { rollupConfig: { relationField: 'members', function: 'count' }, indexed: true }),
    /cannot be indexed/,
  ],
  // translatable
  ['translatable text', def('text', { translatable: true }), null],
  ['translatable email', def('email', { translatable: true }), null],
  ['translatable integer', def('integer', { translatable: true }), /translatable applies to text-like types only/],
  ['translatable enum', def('enum', { enumValues: ['a'], translatable: true }), /translatable applies/],
  // defaultValue
  ['integer default', def('integer', { defaultValue: 5 }), null],
  [
    'integer default of the wrong type',
    def('integer', { defaultValue: 'abc' }),
    /defaultValue is refused: .*whole number/,
  ],
  [
    'integer default under min',
    def('integer', { defaultValue: 1, validationRules: { min: 2 } }),
    /defaultValue is refused: .*at least 2/,
  ],
  ['enum default not a value', def('enum', { enumValues: ['a'], defaultValue: 'b' }), /defaultValue is refused/],
  ['boolean default', def('boolean', { defaultValue: false }), null],
  ['json default', def('json', { defaultValue: { a: [] } }), null],
  [
    'translatable default must be a map',
    def('text', { translatable: true, defaultValue: 'x' }),
    /defaultValue is refused/,
  ],
  // validationRules
  ['minLength on text', def('text', { validationRules: { minLength: 1, maxLength: 5 } }), null],
  ['pattern on slug', def('slug', { validationRules: { pattern: '^a' } }), null],
  ['min on datetime', def('datetime', { validationRules: { min: 0, max: 10 } }), null],
  ['min on decimal', def('decimal', { validationRules: { min: 0.5 } }), null],
  [
    'minLength on integer',
    def('integer', { validationRules: { minLength: 1 } }),
    /validationRules.minLength does not apply to type integer/,
  ],
  ['min on text', def('text', { validationRules: { min: 1 } }), /validationRules.min does not apply to type text/],
  [
    'pattern on integer',
    def('integer', { validationRules: { pattern: '1' } }),
    /validationRules.pattern does not apply/,
  ],
  ['max on boolean', def('boolean', { validationRules: { max: 1 } }), /validationRules.max does not apply/],
  ['minLength on enum', def('enum', { enumValues: ['a'], validationRules: { minLength: 1 } }), /does not apply/],
  ['min on date', def('date', { validationRules: { min: 1 } }), /does not apply/],
  [
    'minLength over maxLength',
    def('text', { validationRules: { minLength: 5, maxLength: 2 } }),
    /minLength is greater than maxLength/,
  ],
  ['min over max', def('number', { validationRules: { min: 5, max: 2 } }), /min is greater than max/],
  ['nested quantifiers (matched in linear time)', def('text', { validationRules: { pattern: '(a+)+$' } }), null],
  ['a backreference', def('text', { validationRules: { pattern: '(a)\\1' } }), /backreferences/],
  ['a lookahead', def('text', { validationRules: { pattern: '^(?=.*\\d)' } }), /lookahead/],
  ['broken pattern', def('text', { validationRules: { pattern: '(' } }), /not a valid regular expression/],
  // structure
  ['structure on json', def('json', { structure: { enforcement: 'off', shape: { type: 'string' } } }), null],
  ['structure on text', def('text', { structure: { enforcement: 'off' } }), /structure does not apply/],
]

describe('checkDefinition', () => {
  it.each(rows)('%s', (_label, field, problem) => {
    const problems = check(field)
    if (problem === null) expect(problems).toEqual([])
    else expect(problems.join('\n')).toMatch(problem)
  })
})

describe('deriveResultType', () => {
  const cases: [string, FieldDef, StoredTypeName | null][] = [
    ['a stored type derives nothing', def('text'), null],
    ['lookup of a text', lookup('owner', 'name'), 'text'],
    ['lookup of a decimal', lookup('owner', 'score'), 'decimal'],
    ['lookup of a relation', lookup('owner', 'friend'), 'relation'],
    ['rollup count', rollup('count'), 'integer'],
    ['rollup count of a field', rollup('count', 'score'), 'integer'],
    ['rollup avg of an integer', rollup('avg', 'age'), 'number'],
    ['rollup sum of an integer', rollup('sum', 'age'), 'integer'],
    ['rollup sum of a decimal', rollup('sum', 'score'), 'decimal'],
    ['rollup sum of a number', rollup('sum', 'ratio'), 'number'],
    ['rollup min of a datetime', rollup('min', 'seen_at'), 'datetime'],
    ['rollup max of a date', rollup('max', 'born'), 'date'],
  ]
  it.each(cases)('%s', (_label, field, resultType) => {
    expect(check(field)).toEqual([])
    expect(derive(field)).toBe(resultType)
  })

  it('ignores a resultType the definition already carries', () => {
    expect(derive(lookup('owner', 'name', { resultType: 'boolean' }))).toBe('text')
  })
})
