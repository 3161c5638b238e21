import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import type { FieldDef } from '../field-types/index.js'
import { planChanges } from './plan-changes.js'

const f = (name: string, over: Partial<FieldDef> = {}): FieldDef => ({
  name,
  type: 'text',
  required: false,
  unique: false,
  indexed: false,
  ...over,
})
const status = f('status', { type: 'enum', enumValues: ['a', 'b'] })
const owner = f('owner', {
  type: 'relation',
  relationConfig: { targetCollection: 'people', relationType: 'belongsTo', onDelete: 'set-null' },
})
const existing = [f('title'), status, owner]

describe('planChanges allows', () => {
  it('no change', () => {
    expect(planChanges(existing, existing)).toEqual({
      added: [],
      indexToggled: [],
      changes: [],
      renamed: [],
      dropped: [],
    })
  })

  it('a reordered list', () => {
    expect(planChanges(existing, [...existing].reverse())).toEqual({
      added: [],
      indexToggled: [],
      changes: [],
      renamed: [],
      dropped: [],
    })
  })

  it('additions, in the order given', () => {
    const next = [f('b'), ...existing, f('a')]
    expect(planChanges(existing, next).added.map((x) => x.name)).toEqual(['b', 'a'])
  })

  it('toggling indexed either way', () => {
    const before = [f('title', { indexed: true }), status]
    const after = [f('title'), { ...status, indexed: true }]
    expect(planChanges(before, after)).toMatchObject({ added: [], indexToggled: after })
    expect(planChanges(before, after).changes.map((c) => [c.kind, c.field])).toEqual([
      ['indexed', 'title'],
      ['indexed', 'status'],
    ])
  })

  it('the same definition written differently (absent vs false vs undefined)', () => {
    const written = { ...f('title'), translatable: false, label: undefined } as FieldDef
    expect(planChanges([f('title')], [written])).toEqual({
      added: [],
      indexToggled: [],
      changes: [],
      renamed: [],
      dropped: [],
    })
  })

  it('keys in another order inside configs', () => {
    const reordered = f('owner', {
      type: 'relation',
      relationConfig: { onDelete: 'set-null', relationType: 'belongsTo', targetCollection: 'people' },
    })
    expect(planChanges([owner], [reordered]).added).toEqual([])
  })
})

type Row = [label: string, next: FieldDef[], field: string, pattern: RegExp]

const rows: Row[] = [
  ['a removed field', [f('title'), status], 'owner', /is missing from fields.*"drop".*"renames"/],
  ['a renamed field', [f('headline'), status, owner], 'title', /is missing from fields.*"drop".*"renames"/],
  ['an emptied list', [], 'title', /is missing from fields.*"drop".*"renames"/],
  ['a type that does not convert', [f('title', { type: 'boolean' }), status, owner], 'title', /from text to boolean/],
  ['translatable turned on', [f('title', { translatable: true }), status, owner], 'title', /changing translatable/],
  [
    'another relation target',
    [f('title'), status, { ...owner, relationConfig: { ...owner.relationConfig!, targetCollection: 'teams' } }],
    'owner',
    /relationConfig\.targetCollection/,
  ],
  [
    'another relationType',
    [f('title'), status, { ...owner, relationConfig: { ...owner.relationConfig!, relationType: 'hasMany' } }],
    'owner',
    /relationConfig\.relationType/,
  ],
  [
    'a convertible type with a change no kind makes',
    [f('title', { type: 'email', translatable: true }), status, owner],
    'title',
    /changing translatable/,
  ],
]

describe('planChanges plans', () => {
  it('a label and enum values as typed changes, each with the field before and after', () => {
    const next = [f('title', { label: 'Title' }), { ...status, enumValues: ['a', 'b', 'c'] }, owner]
    const plan = planChanges(existing, next)
    expect(plan.changes).toEqual([
      { kind: 'label', field: 'title', before: existing[0], after: next[0] },
      { kind: 'enumValues', field: 'status', before: status, after: next[1] },
    ])
  })

  it('required and a default together, the default first (it fills the rows required finds empty)', () => {
    const next = [f('title', { required: true, defaultValue: 'x' }), status, owner]
    expect(planChanges(existing, next).changes.map((c) => c.kind)).toEqual(['defaultValue', 'required'])
  })

  it('type, rules, unique and relationConfig as typed changes, in the order they are applied', () => {
    const next = [
      f('title', { type: 'email', unique: true, validationRules: { maxLength: 5 } }),
      status,
      { ...owner, relationConfig: { ...owner.relationConfig!, onDelete: 'cascade' as const, displayField: 'name' } },
    ]
    expect(planChanges(existing, next).changes.map((c) => [c.kind, c.field])).toEqual([
      ['type', 'title'],
      ['validationRules', 'title'],
      ['unique', 'title'],
      ['relationConfig', 'owner'],
    ])
  })

  it('a removed value mapped by enumChanges', () => {
    const next = [f('title'), { ...status, enumValues: ['b', 'c'] }, owner]
    const plan = planChanges(existing, next, { enumChanges: { status: { a: 'c' } } })
    expect(plan.changes.map((c) => c.kind)).toEqual(['enumValues'])
  })
})

describe('planChanges refuses bad enumChanges with invalid_request', () => {
  const next = [f('title'), { ...status, enumValues: ['b', 'c'] }, owner]
  it.each<[string, Record<string, Record<string, string>>, RegExp]>([
    ['a field without an enum change', { title: { a: 'b' } }, /names "title"/],
    ['an unknown field', { nope: { a: 'b' } }, /names "nope"/],
    ['a value the field never had', { status: { z: 'b' } }, /"z" is not a value/],
    ['a value that stays', { status: { b: 'c' } }, /"b" stays a value/],
    ['a target outside the new values', { status: { a: 'a' } }, /"a" is not one of its new enumValues/],
  ])('%s', (_label, enumChanges, pattern) => {
    expect(() => planChanges(existing, next, { enumChanges })).toThrow(pattern)
    try {
      planChanges(existing, next, { enumChanges })
    } catch (err) {
      expect((err as AppError).code).toBe('invalid_request')
    }
  })
})

describe('planChanges refuses', () => {
  it.each(rows)('%s', (_label, next, field, pattern) => {
    try {
      planChanges(existing, next)
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(AppError)
      const error = err as AppError
      expect(error.code).toBe('invalid_field')
      expect(error.status).toBe(400)
      expect(error.details.field).toBe(field)
      expect(error.message).toMatch(pattern)
    }
  })
})

describe('planChanges with renames and drop', () => {
  it('a renamed field keeps its place as a rename, not an addition, and its other changes are kinds', () => {
    const next = [f('headline', { label: 'Headline' }), status, owner]
    const plan = planChanges(existing, next, { enumChanges: {}, renames: { title: 'headline' } })
    expect(plan.added).toEqual([])
    expect(plan.renamed).toEqual([{ from: f('title'), to: next[0] }])
    expect(plan.changes.map((c) => [c.kind, c.field])).toEqual([['label', 'headline']])
  })

  it('a dropped field is planned as dropped; listed again in the same PATCH it is refused (two PATCHes replace it)', () => {
    const plan = planChanges(existing, [status, owner], { enumChanges: {}, drop: ['title'] })
    expect(plan.dropped).toEqual([f('title')])
    expect(plan.added).toEqual([])
    expect(() =>
      planChanges(existing, [status, owner, f('title', { type: 'integer' })], { enumChanges: {}, drop: ['title'] }),
    ).toThrow(/"title" is dropped but fields still lists it/)
  })
})
