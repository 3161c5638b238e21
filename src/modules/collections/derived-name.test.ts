import { describe, expect, it } from 'vitest'
import { derivedName, identifierLimit } from './derived-name.js'

const table50 = 'a'.repeat(50)

describe('derivedName', () => {
  it.each([
    ['short', 'articles__title__idx'],
    ['exactly 63', `${'t'.repeat(58)}__idx`],
  ])('keeps a name that fits (%s)', (_label, name) => {
    expect(derivedName(name)).toBe(name)
  })

  it.each([
    ['64 characters', `${'t'.repeat(59)}__idx`],
    ['a 50-character table and a long field', `${table50}__description__uq`],
    ['the longest possible', `${table50}__${'f'.repeat(50)}__idx`],
  ])('shortens a longer name to exactly the limit, deterministically (%s)', (_label, name) => {
    const short = derivedName(name)
    expect(short).toHaveLength(identifierLimit)
    expect(short).toMatch(/^[a-z0-9_]+_[0-9a-f]{8}$/)
    expect(short.startsWith(name.slice(0, 54))).toBe(true)
    expect(derivedName(name)).toBe(short)
  })

  // PostgreSQL would have cut each pair below to the same 63 bytes.
  it.each([
    ['unique and plain index of one field', `${table50}__description__uq`, `${table50}__description__idx`],
    ['two fields sharing a prefix', `${table50}__abcdefghij_1__uq`, `${table50}__abcdefghij_2__uq`],
    ['a field index and the created_at index', `${table50}__created_at_local__idx`, `${table50}__created_at__idx`],
  ])('keeps names apart that only differ past 63 characters (%s)', (_label, a, b) => {
    expect(a.slice(0, identifierLimit)).toBe(b.slice(0, identifierLimit))
    expect(derivedName(a)).not.toBe(derivedName(b))
  })
})
