import { describe, expect, it } from 'vitest'
import { AppError, type ErrorCode } from '../../../lib/errors.js'
import type { FieldDef } from '../field-types/index.js'
import { normaliseFields, type NormaliseContext } from './normalise-fields.js'

const people: FieldDef[] = [
  { name: 'name', type: 'text', required: true, unique: false, indexed: false },
  { name: 'age', type: 'integer', required: false, unique: false, indexed: false },
]
const context: NormaliseContext = { collection: 'orders', collections: new Map([['people', people]]) }

const text = (name: string, over: Record<string, unknown> = {}) => ({ name, type: 'text', required: false, ...over })
const owner = {
  name: 'owner',
  type: 'relation',
  required: false,
  relationConfig: { targetCollection: 'people', relationType: 'belongsTo' },
}
const members = {
  name: 'members',
  type: 'relation',
  required: false,
  relationConfig: { targetCollection: 'people', relationType: 'hasMany' },
}

const failure = (input: unknown): { code: ErrorCode; details: Record<string, unknown>; message: string } => {
  try {
    normaliseFields(input, context)
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, details: err.details, message: err.message }
    throw err
  }
  throw new Error('expected normaliseFields to throw')
}

type Row = [label: string, input: unknown, code: ErrorCode, details: Record<string, unknown>]

const rows: Row[] = [
  ['not an array', { title: 'text' }, 'invalid_field', { field: null, index: null }],
  ['too many fields', Array.from({ length: 501 }, (_, i) => text(`f${i}`)), 'invalid_field', { index: 500 }],
  ['a field that is not an object', [text('a'), 'b'], 'invalid_field', { field: null, index: 1 }],
  ['a bad field name', [text('a'), text('Title')], 'invalid_name', { field: 'Title', index: 1 }],
  ['a missing field name', [{ type: 'text', required: true }], 'invalid_name', { field: null, index: 0 }],
  ['a long field name', [text(`a${'b'.repeat(50)}`)], 'invalid_name', { index: 0 }],
  ['a system column', [text('a'), text('created_at')], 'reserved_field', { field: 'created_at', index: 1 }],
  ['_version', [text('_version')], 'reserved_field', { field: '_version', index: 0 }],
  ['two fields with one name', [text('a'), text('b'), text('a')], 'duplicate_field', { field: 'a', index: 2 }],
  ['an unknown type', [text('a', { type: 'string' })], 'invalid_field', { field: 'a', index: 0 }],
  ['a missing type', [{ name: 'a', required: true }], 'invalid_field', { field: 'a', index: 0, path: 'type' }],
  ['required missing', [{ name: 'a', type: 'text' }], 'invalid_field', { field: 'a', index: 0, path: 'required' }],
  [
    'required not a boolean',
    [text('a', { required: 'yes' })],
    'invalid_field',
    { field: 'a', index: 0, path: 'required' },
  ],
  ['unique not a boolean', [text('a', { unique: 1 })], 'invalid_field', { path: 'unique' }],
  ['an unknown rule', [text('a', { validationRules: { email: true } })], 'invalid_field', { path: 'validationRules' }],
  [
    'a negative minLength',
    [text('a', { validationRules: { minLength: -1 } })],
    'invalid_field',
    { path: 'validationRules.minLength' },
  ],
  [
    'an infinite max',
    [{ name: 'n', type: 'number', required: false, validationRules: { max: Number.POSITIVE_INFINITY } }],
    'invalid_field',
    { path: 'validationRules.max' },
  ],
  [
    'a bad relationType',
    [{ ...owner, relationConfig: { targetCollection: 'people', relationType: 'manyToMany' } }],
    'invalid_field',
    { path: 'relationConfig.relationType' },
  ],
  [
    'a bad onDelete',
    [{ ...owner, relationConfig: { targetCollection: 'people', relationType: 'belongsTo', onDelete: 'nothing' } }],
    'invalid_field',
    { path: 'relationConfig.onDelete' },
  ],
  [
    'a typo in relationConfig',
    [{ ...owner, relationConfig: { targetCollection: 'people', relationType: 'belongsTo', ondelete: 'cascade' } }],
    'invalid_field',
    { path: 'relationConfig', property: 'ondelete' },
  ],
  [
    'an unknown property',
    [text('a'), text('b', { uniqe: true })],
    'invalid_field',
    { field: 'b', index: 1, property: 'uniqe', path: '' },
  ],
  [
    'an unknown property that is null',
    [text('a', { extra: null })],
    'invalid_field',
    { field: 'a', index: 0, property: 'extra' },
  ],
  [
    'a property of the collection on a field',
    [text('a', { schemaVersion: 1 })],
    'invalid_field',
    { field: 'a', index: 0, property: 'schemaVersion' },
  ],
  ['null instead of a field', [text('a'), null], 'invalid_field', { field: null, index: 1 }],
  ['a list instead of a field', [[1]], 'invalid_field', { field: null, index: 0 }],
  [
    'enum without enumValues',
    [{ name: 'status', type: 'enum', required: true }],
    'invalid_field',
    { field: 'status', index: 0 },
  ],
  [
    'relation without relationConfig',
    [text('a'), { name: 'owner', type: 'relation', required: false }],
    'invalid_field',
    { field: 'owner', index: 1 },
  ],
  [
    'relation to an unknown collection',
    [{ ...owner, relationConfig: { targetCollection: 'ghosts', relationType: 'belongsTo' } }],
    'invalid_field',
    { field: 'owner' },
  ],
  [
    'lookup through a hasMany',
    [
      members,
      { name: 'l', type: 'lookup', required: false, lookupConfig: { relationField: 'members', targetField: 'name' } },
    ],
    'invalid_field',
    { field: 'l', index: 1 },
  ],
  [
    'rollup sum of text',
    [
      members,
      {
        name: 'r',
        type: 'rollup',
        required: false,
        rollupConfig: { relationField: 'members', function: 'sum', targetField: 'name' },
      },
    ],
    'invalid_field',
    { field: 'r', index: 1 },
  ],
  [
    'a required lookup',
    [
      owner,
      { name: 'l', type: 'lookup', required: true, lookupConfig: { relationField: 'owner', targetField: 'name' } },
    ],
    'invalid_field',
    { field: 'l' },
  ],
  [
    'translatable integer',
    [{ name: 'n', type: 'integer', required: false, translatable: true }],
    'invalid_field',
    { field: 'n' },
  ],
  [
    'a bad default',
    [{ name: 'n', type: 'integer', required: false, defaultValue: 'x' }],
    'invalid_field',
    { field: 'n' },
  ],
  [
    'a pattern with a backreference',
    [text('a', { validationRules: { pattern: '(x)\\1' } })],
    'invalid_field',
    { field: 'a' },
  ],
  ['min on text', [text('a', { validationRules: { min: 1 } })], 'invalid_field', { field: 'a' }],
]

describe('normaliseFields refuses', () => {
  it.each(rows)('%s', (_label, input, code, details) => {
    const error = failure(input)
    expect(error.code).toBe(code)
    expect(error.details).toMatchObject(details)
  })

  it('reports the first bad field in order', () => {
    expect(failure([text('Bad'), text('id')]).code).toBe('invalid_name')
    expect(failure([text('id'), text('Bad')]).code).toBe('reserved_field')
  })

  it('keeps messages short when a type name is long', () => {
    expect(failure([text('a', { type: 'x'.repeat(5000) })]).message.length).toBeLessThan(120)
  })
})

describe('normaliseFields accepts', () => {
  it('an empty list', () => {
    expect(normaliseFields([], context)).toEqual([])
  })

  it('and collapses jsonb to json, fills flags and drops nulls', () => {
    const fields = normaliseFields(
      [
        {
          name: 'data',
          type: 'jsonb',
          required: false,
          label: null,
          enumValues: null,
          translatable: false,
          defaultValue: null,
        },
      ],
      context,
    )
    expect(fields).toEqual([{ name: 'data', type: 'json', required: false, unique: false, indexed: false }])
  })

  it('a full text field as given', () => {
    const input = {
      name: 'title',
      type: 'text',
      required: true,
      unique: true,
      indexed: true,
      label: 'Title',
      translatable: true,
      validationRules: { minLength: 1, maxLength: 80 },
    }
    expect(normaliseFields([input], context)).toEqual([input])
  })

  it('relations with onDelete defaulting to set-null, to itself too', () => {
    const fields = normaliseFields(
      [
        owner,
        {
          name: 'parent',
          type: 'relation',
          required: false,
          relationConfig: {
            targetCollection: 'orders',
            relationType: 'belongsTo',
            onDelete: 'cascade',
            displayField: 'title',
          },
        },
        text('title'),
      ],
      context,
    )
    expect(fields[0]?.relationConfig).toEqual({
      targetCollection: 'people',
      relationType: 'belongsTo',
      onDelete: 'set-null',
    })
    expect(fields[1]?.relationConfig).toEqual({
      targetCollection: 'orders',
      relationType: 'belongsTo',
      onDelete: 'cascade',
      displayField: 'title',
    })
  })

  it('lookups and rollups with a derived resultType, whatever the client sent', () => {
    const fields = normaliseFields(
      [
        {
          name: 'owner_name',
          type: 'lookup',
          required: false,
          resultType: 'boolean',
          lookupConfig: { relationField: 'owner', targetField: 'name' },
        },
        owner,
        members,
        {
          name: 'member_count',
          type: 'rollup',
          required: false,
          rollupConfig: { relationField: 'members', function: 'count' },
        },
        {
          name: 'age_sum',
          type: 'rollup',
          required: false,
          rollupConfig: { relationField: 'members', function: 'sum', targetField: 'age' },
        },
        {
          name: 'age_avg',
          type: 'rollup',
          required: false,
          resultType: 'text',
          rollupConfig: { relationField: 'members', function: 'avg', targetField: 'age' },
        },
      ],
      context,
    )
    expect(fields.map((f) => [f.name, f.resultType ?? null])).toEqual([
      ['owner_name', 'text'],
      ['owner', null],
      ['members', null],
      ['member_count', 'integer'],
      ['age_sum', 'integer'],
      ['age_avg', 'number'],
    ])
  })

  it('defaults in their stored form', () => {
    const [field] = normaliseFields(
      [{ name: 'ref', type: 'uuid', required: false, defaultValue: '123E4567E89B12D3A456426614174000' }],
      context,
    )
    expect(field?.defaultValue).toBe('123e4567-e89b-12d3-a456-426614174000')
  })

  it('structure on a json field, passed through', () => {
    const structure = { enforcement: 'warn', shape: { type: 'list', items: { type: 'string' } } }
    const [field] = normaliseFields([{ name: 'tags', type: 'json', required: false, structure }], context)
    expect(field?.structure).toEqual(structure)
  })

  it('ignores the project’s entry for the collection itself', () => {
    const stale = new Map([
      ['people', people],
      ['orders', [{ name: 'gone', type: 'text', required: false, unique: false, indexed: false } satisfies FieldDef]],
    ])
    const input = [
      {
        name: 'p',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: 'orders', relationType: 'belongsTo', displayField: 'gone' },
      },
    ]
    expect(() => normaliseFields(input, { collection: 'orders', collections: stale })).toThrow(/displayField "gone"/)
  })
})
