import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import type { FieldDef } from '../field-types/index.js'
import { diffFields } from './diff-fields.js'

const f = (name: string, over: Partial<FieldDef> = {}): FieldDef => ({ name, type: 'text', required: false, unique: false, indexed: false, ...over })
const status = f('status', { type: 'enum', enumValues: ['a', 'b'] })
const owner = f('owner', { type: 'relation', relationConfig: { targetCollection: 'people', relationType: 'belongsTo', onDelete: 'set-null' } })
const existing = [f('title'), status, owner]

describe('diffFields allows', () => {
  it('no change', () => {
    expect(diffFields(existing, existing)).toEqual({ added: [], indexToggled: [] })
  })

  it('a reordered list', () => {
    expect(diffFields(existing, [...existing].reverse())).toEqual({ added: [], indexToggled: [] })
  })

  it('additions, in the order given', () => {
    const next = [f('b'), ...existing, f('a')]
    expect(diffFields(existing, next).added.map((x) => x.name)).toEqual(['b', 'a'])
  })

  it('toggling indexed either way', () => {
    const before = [f('title', { indexed: true }), status]
    const after = [f('title'), { ...status, indexed: true }]
    expect(diffFields(before, after)).toEqual({ added: [], indexToggled: after })
  })

  it('the same definition written differently (absent vs false vs undefined)', () => {
    const written = { ...f('title'), translatable: false, label: undefined } as FieldDef
    expect(diffFields([f('title')], [written])).toEqual({ added: [], indexToggled: [] })
  })

  it('keys in another order inside configs', () => {
    const reordered = f('owner', { type: 'relation', relationConfig: { onDelete: 'set-null', relationType: 'belongsTo', targetCollection: 'people' } })
    expect(diffFields([owner], [reordered]).added).toEqual([])
  })
})

type Row = [label: string, next: FieldDef[], field: string, pattern: RegExp]

const rows: Row[] = [
  ['a removed field', [f('title'), status], 'owner', /removing or renaming/],
  ['a renamed field', [f('headline'), status, owner], 'title', /removing or renaming/],
  ['an emptied list', [], 'title', /removing or renaming/],
  ['a changed type', [f('title', { type: 'richtext' }), status, owner], 'title', /changing type/],
  ['required turned on', [f('title', { required: true }), status, owner], 'title', /changing required/],
  ['unique turned on', [f('title', { unique: true }), status, owner], 'title', /changing unique/],
  ['a changed label', [f('title', { label: 'Title' }), status, owner], 'title', /changing label/],
  ['translatable turned on', [f('title', { translatable: true }), status, owner], 'title', /changing translatable/],
  ['an added enum value', [f('title'), { ...status, enumValues: ['a', 'b', 'c'] }, owner], 'status', /changing enumValues/],
  ['a new default', [f('title', { defaultValue: 'x' }), status, owner], 'title', /changing defaultValue/],
  ['new rules', [f('title', { validationRules: { maxLength: 5 } }), status, owner], 'title', /changing validationRules/],
  ['a changed onDelete', [f('title'), status, { ...owner, relationConfig: { ...owner.relationConfig!, onDelete: 'cascade' } }], 'owner', /changing relationConfig/],
  ['two changes at once', [f('title', { type: 'email', required: true }), status, owner], 'title', /changing required, type/],
]

describe('diffFields refuses', () => {
  it.each(rows)('%s', (_label, next, field, pattern) => {
    try {
      diffFields(existing, next)
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
