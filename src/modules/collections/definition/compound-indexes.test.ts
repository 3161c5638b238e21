import { describe, expect, it } from 'vitest'
import { isAppError } from '../../../lib/errors.js'
import type { FieldDef } from '../field-types/index.js'
import { compoundIndexName, normaliseIndexes } from './compound-indexes.js'

const fields: FieldDef[] = [
  { name: 'status', type: 'enum', required: false, unique: false, indexed: false, enumValues: ['a'] },
  { name: 'views', type: 'integer', required: false, unique: false, indexed: false },
  { name: 'meta', type: 'json', required: false, unique: false, indexed: false },
  { name: 'name', type: 'text', required: false, unique: false, indexed: false, translatable: true },
  { name: 'a__b', type: 'text', required: false, unique: false, indexed: false },
  { name: 'c', type: 'text', required: false, unique: false, indexed: false },
  { name: 'a', type: 'text', required: false, unique: false, indexed: false },
  { name: 'b__c', type: 'text', required: false, unique: false, indexed: false },
]

function refusal(input: unknown): Record<string, unknown> {
  try {
    normaliseIndexes(input, 'articles', fields)
  } catch (err) {
    if (isAppError(err) && err.code === 'invalid_request') return err.details
    throw err
  }
  throw new Error('accepted')
}

describe('normaliseIndexes', () => {
  it('absent or null is none; an entry gets unique false and its derived name', () => {
    expect(normaliseIndexes(undefined, 'articles', fields)).toEqual([])
    expect(normaliseIndexes(null, 'articles', fields)).toEqual([])
    expect(normaliseIndexes([{ fields: ['status', '-views'], name: 'ignored' }], 'articles', fields)).toEqual([
      { name: compoundIndexName('articles', ['status', '-views'], false), fields: ['status', '-views'], unique: false },
    ])
  })

  it('names are short, stable, and differ where joined field names would not', () => {
    const long = 'x'.repeat(50)
    expect(compoundIndexName(long, ['status'], false)).toHaveLength(63)
    expect(compoundIndexName('articles', ['status'], false)).toMatch(/^articles__ix_[0-9a-f]{8}$/)
    expect(compoundIndexName('t', ['a__b', 'c'], false)).not.toBe(compoundIndexName('t', ['a', 'b__c'], false))
    expect(compoundIndexName('t', ['a'], false)).not.toBe(compoundIndexName('t', ['a'], true))
    expect(compoundIndexName('t', ['a'], false)).not.toBe(compoundIndexName('t', ['-a'], false))
    expect(normaliseIndexes([{ fields: ['a__b', 'c'] }, { fields: ['a', 'b__c'] }], 't', fields)).toHaveLength(2)
  })

  it.each([
    ['not a list', { fields: ['status'] }, { index: null }],
    ['17 indexes', Array.from({ length: 17 }, () => ({ fields: ['status'] })), { index: 16 }],
    ['no fields', [{ fields: [] }], { index: 0 }],
    ['fields not a list', [{ fields: 'status' }], { index: 0 }],
    [
      '9 fields',
      [{ fields: ['status', 'views', 'a', 'c', 'created_at', 'updated_at', 'created_by', 'updated_by', 'owned_by'] }],
      { index: 0 },
    ],
    ['an unknown property', [{ fields: ['status'], partial: true }], { index: 0 }],
    ['an unknown field', [{ fields: ['nope'] }], { index: 0, field: 'nope' }],
    ['a json field', [{ fields: ['meta'] }], { index: 0, field: 'meta' }],
    ['a translatable field', [{ fields: ['name'] }], { index: 0, field: 'name' }],
    ['deleted_at', [{ fields: ['deleted_at'] }], { index: 0, field: 'deleted_at' }],
    ['id', [{ fields: ['id'] }], { index: 0, field: 'id' }],
    ['a field twice', [{ fields: ['views', '-views'] }], { index: 0, field: 'views' }],
    [
      'the same fields twice',
      [{ fields: ['status'] }, { fields: ['-status'], unique: true }],
      { index: 1, duplicateOf: 0 },
    ],
  ])('refuses %s (400 invalid_request naming the index)', (_label, input, details) => {
    expect(refusal(input)).toMatchObject({ property: 'indexes', ...details })
  })
})
