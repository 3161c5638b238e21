import { describe, expect, it } from 'vitest'
import { filterNamesField, renameFilterField } from './rename-field.js'

describe('renameFilterField', () => {
  it('renames object-format keys and paths through them, inside _and, _or and _not', () => {
    const filter = {
      title: { _eq: 'a' },
      'title.sub': { _null: true },
      titles: { _eq: 'x' },
      _and: [{ title: { _neq: 'b' } }, { _or: [{ _not: { title: { _eq: 'c' } } }] }],
    }
    expect(renameFilterField(filter, 'title', 'name')).toEqual({
      name: { _eq: 'a' },
      'name.sub': { _null: true },
      titles: { _eq: 'x' },
      _and: [{ name: { _neq: 'b' } }, { _or: [{ _not: { name: { _eq: 'c' } } }] }],
    })
    expect(filter.title).toEqual({ _eq: 'a' })
  })

  it('renames array-format conditions and never reads operator values as names', () => {
    expect(renameFilterField([{ field: 'title', op: 'eq', value: 'title' }], 'title', 'name')).toEqual([
      { field: 'name', op: 'eq', value: 'title' },
    ])
    expect(filterNamesField({ status: { _eq: { title: 1 } } }, 'title')).toBe(false)
    expect(filterNamesField({ status: { _in: ['title'] } }, 'title')).toBe(false)
    expect(filterNamesField({ _or: [{ 'title.x': { _eq: 1 } }] }, 'title')).toBe(true)
    expect(filterNamesField(null, 'title')).toBe(false)
  })
})
