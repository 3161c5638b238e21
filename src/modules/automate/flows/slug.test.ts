import { describe, expect, it } from 'vitest'
import { freeSlug, slugFromName } from './slug.js'

describe('slugFromName', () => {
  it.each([
    ['Order sync', 'order-sync'],
    ['  Café → Crème!  ', 'cafe-creme'],
    ['---', 'flow'],
    ['日本語', 'flow'],
    ['a'.repeat(200), 'a'.repeat(90)],
    ['Send  2 emails/day', 'send-2-emails-day'],
  ])('%j → %j', (name, slug) => expect(slugFromName(name)).toBe(slug))
})

describe('freeSlug', () => {
  it('keeps a free base, else numbers it from 2', () => {
    expect(freeSlug('x', new Set())).toBe('x')
    expect(freeSlug('x', new Set(['x']))).toBe('x-2')
    expect(freeSlug('x', new Set(['x', 'x-2', 'x-3']))).toBe('x-4')
  })
})
