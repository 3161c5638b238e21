import { describe, expect, it } from 'vitest'
import type { StoredTypeName, ValueKind } from './field-def.js'
import { fieldTypeOf, fieldTypes, findFieldType, plainValueKind } from './registry.js'

// The list of addendum §4, copied here rather than imported: the registry is checked against the spec.
const specTypes = [
  'text',
  'richtext',
  'email',
  'url',
  'phone',
  'slug',
  'uuid',
  'integer',
  'decimal',
  'number',
  'boolean',
  'date',
  'datetime',
  'enum',
  'multi_enum',
  'json',
  'relation',
  'file',
  'geo',
  'lookup',
  'rollup',
]

describe('field type registry', () => {
  it('holds exactly the 21 types of addendum §4', () => {
    expect(specTypes).toHaveLength(21)
    expect(fieldTypes.map((t) => t.type).sort()).toEqual([...specTypes].sort())
  })

  it('finds every type by its canonical name and jsonb as json', () => {
    for (const name of specTypes) expect(findFieldType(name)?.type).toBe(name)
    expect(findFieldType('jsonb')?.type).toBe('json')
    expect(fieldTypeOf('json').aliases).toEqual(['jsonb'])
  })

  it('knows no other names', () => {
    for (const name of ['string', 'JSON', 'Text', 'int', 'float', '', 'constructor', '__proto__', 'toString']) {
      expect(findFieldType(name)).toBeUndefined()
    }
  })

  it('has no alias that shadows another name', () => {
    const names = fieldTypes.flatMap((t) => [t.type, ...t.aliases])
    expect(new Set(names).size).toBe(names.length)
  })

  it('marks lookup and rollup computed and the six text-likes searchable and translatable', () => {
    expect(fieldTypes.filter((t) => t.computed).map((t) => t.type)).toEqual(['lookup', 'rollup'])
    const textLikes = ['text', 'richtext', 'email', 'url', 'phone', 'slug']
    expect(fieldTypes.filter((t) => t.searchable).map((t) => t.type)).toEqual(textLikes)
    expect(fieldTypes.filter((t) => t.textLike).map((t) => t.type)).toEqual(textLikes)
  })

  // What a lookup or rollup of each stored type reads as (the filter kind of a plain value).
  const plainKinds: Record<StoredTypeName, ValueKind> = {
    text: 'text',
    richtext: 'text',
    email: 'text',
    url: 'text',
    phone: 'text',
    slug: 'text',
    uuid: 'text',
    integer: 'integer',
    decimal: 'number',
    number: 'number',
    boolean: 'boolean',
    date: 'text',
    datetime: 'integer',
    enum: 'text',
    multi_enum: 'json',
    json: 'json',
    relation: 'text',
    file: 'text',
    geo: 'json',
  }
  it.each(Object.entries(plainKinds))('reads a plain %s value as %s', (type, kind) => {
    expect(plainValueKind(type as StoredTypeName)).toBe(kind)
  })

  it('freezes its entries', () => {
    expect(Object.isFrozen(fieldTypeOf('text'))).toBe(true)
  })
})
