import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import type { FieldDef } from '../collections/index.js'
import { fieldStructure, type FieldStructure } from './field-structure.js'
import { applyFixes, checkFixes, type Fix } from './repairer.js'

const json = (shape: unknown): FieldStructure =>
  fieldStructure({
    name: 'meta',
    type: 'json',
    required: false,
    unique: false,
    indexed: false,
    structure: { enforcement: 'warn', shape: normalised(shape) },
  } as FieldDef)!
// The stored (normalised) form: enum values as objects, `additional` filled in.
function normalised(shape: any): any {
  if (shape.type === 'enum') return { ...shape, values: shape.values.map((v: string) => ({ value: v })) }
  if (shape.type === 'object')
    return {
      ...shape,
      additional: shape.additional ?? false,
      entries: Object.fromEntries(Object.entries(shape.entries).map(([k, s]) => [k, normalised(s)])),
    }
  if (shape.type === 'list') return { ...shape, items: normalised(shape.items) }
  if (shape.type === 'map') return { ...shape, keys: normalised(shape.keys), values: normalised(shape.values) }
  return shape
}

const place = json({
  type: 'object',
  entries: {
    biome: { type: 'list', items: { type: 'enum', values: ['Forest', 'Desert'] } },
    kind: { type: 'enum', values: ['city'] },
    rooms: { type: 'list', items: { type: 'object', entries: { kind: { type: 'enum', values: ['bed'] } } } },
    scores: { type: 'map', keys: { type: 'enum', values: ['red', 'green'] }, values: { type: 'enum', values: ['hi'] } },
  },
})
const multi = fieldStructure({
  name: 'tags',
  type: 'multi_enum',
  required: false,
  unique: false,
  indexed: false,
  enumValues: ['alpha', 'beta'],
})!
const column = fieldStructure({
  name: 'status',
  type: 'enum',
  required: false,
  unique: false,
  indexed: false,
  enumValues: ['open'],
})!

const fix = (kind: Fix['kind'], path: string, from: string, to: string): Fix => ({ kind, path, from, to })

describe('checkFixes', () => {
  it('accepts what a scan group carries', () => {
    const fixes = [
      fix('enum', 'biome[]', 'Fores', 'Forest'),
      fix('enum', 'kind', 'City', 'city'),
      fix('enum', 'rooms[].kind', 'Bed', 'bed'),
      fix('unknown-key', '$', 'Biome', 'biome'),
      fix('unknown-key', 'rooms[]', 'Kind', 'kind'),
      fix('key', 'scores{key}', 'gren', 'green'),
      fix('enum', 'scores{}', 'Hi', 'hi'),
    ]
    expect(checkFixes(place, fixes).map((f) => f.path)).toEqual(fixes.map((f) => f.path))
    expect(checkFixes(multi, [fix('enum', '$', 'Beta', 'beta')])).toHaveLength(1)
    expect(checkFixes(column, [fix('enum', '$', 'Open', 'open')])).toHaveLength(1)
  })

  const refused: [string, unknown, RegExp][] = [
    ['nothing', [], /at least one/],
    ['not a list', 'x', /at least one/],
    ['51 fixes', Array.from({ length: 51 }, (_, i) => fix('enum', 'kind', `x${i}`, 'city')), /at most 50/],
    ['a type fix', [{ kind: 'type', path: 'kind', from: '1', to: 'city' }], /cannot be repaired/],
    ['a number as from', [{ kind: 'enum', path: 'kind', from: 1, to: 'city' }], /strings/],
    ['from equal to to', [fix('enum', 'kind', 'city', 'city')], /the same/],
    ['an unknown path', [fix('enum', 'kinds', 'City', 'city')], /no location/],
    ['an enum fix at a list', [fix('enum', 'biome', 'x', 'Forest')], /does not hold enum values/],
    ['an enum fix at map keys', [fix('enum', 'scores{key}', 'gren', 'green')], /does not hold enum values/],
    ['a key fix at an enum', [fix('key', 'kind', 'City', 'city')], /not the keys of a map/],
    ['a to not allowed', [fix('enum', 'kind', 'City', 'town')], /not allowed/],
    ['a from allowed', [fix('enum', 'biome[]', 'Desert', 'Forest')], /nothing to repair/],
    ['an unknown-key fix at a list', [fix('unknown-key', 'biome', 'a', 'b')], /not an object/],
    ['an unknown-key fix from a declared key', [fix('unknown-key', '$', 'kind', 'biome')], /is a declared key/],
    ['an unknown-key fix to an undeclared key', [fix('unknown-key', '$', 'Kind', 'kinds')], /not a declared key/],
    [
      'two fixes of one value',
      [fix('enum', 'kind', 'City', 'city'), fix('enum', 'kind', 'City', 'city')],
      /already repairs/,
    ],
  ]
  for (const [name, input, message] of refused) {
    it(`refuses ${name} (VALIDATION_ERROR)`, () => {
      let caught: unknown
      try {
        checkFixes(place, input)
      } catch (err) {
        caught = err
      }
      expect(caught).toBeInstanceOf(AppError)
      expect((caught as AppError).code).toBe('VALIDATION_ERROR')
      expect((caught as AppError).message).toMatch(message)
    })
  }
})

describe('applyFixes', () => {
  const all = checkFixes(place, [
    fix('enum', 'biome[]', 'Fores', 'Forest'),
    fix('enum', 'kind', 'City', 'city'),
    fix('enum', 'rooms[].kind', 'Bed', 'bed'),
    fix('unknown-key', '$', 'Biome', 'biome'),
    fix('unknown-key', 'rooms[]', 'Kind', 'kind'),
    fix('key', 'scores{key}', 'gren', 'green'),
    fix('enum', 'scores{}', 'Hi', 'hi'),
  ])
  const rows: [string, unknown, unknown, number][] = [
    [
      'every list item equal to from',
      { biome: ['Fores', 'Desert', 'Fores'] },
      { biome: ['Forest', 'Desert', 'Forest'] },
      2,
    ],
    ['an entry', { kind: 'City', biome: [] }, { kind: 'city', biome: [] }, 1],
    [
      'inside list items',
      { rooms: [{ kind: 'Bed' }, { kind: 'bed' }] },
      { rooms: [{ kind: 'bed' }, { kind: 'bed' }] },
      1,
    ],
    [
      'a key renamed in place, then its value fixed',
      { a: 1, Biome: ['Fores'], z: 2 },
      { a: 1, biome: ['Forest'], z: 2 },
      2,
    ],
    ['keys inside list items', { rooms: [{ Kind: 'Bed' }] }, { rooms: [{ kind: 'bed' }] }, 2],
    ['a map key and a map value', { scores: { gren: 'Hi', red: 'hi' } }, { scores: { green: 'hi', red: 'hi' } }, 2],
    ['nothing that matches', { biome: ['Jungle'], kind: 5 }, { biome: ['Jungle'], kind: 5 }, 0],
    ['a value of another type', 'Fores', 'Fores', 0],
  ]
  for (const [name, value, expected, applied] of rows) {
    it(name, () => {
      const before = structuredClone(value)
      const outcome = applyFixes(value, place, all)
      expect(outcome).toEqual({ value: expected, applied, refusal: null })
      expect(value).toEqual(before)
      // Key order is kept.
      if (expected && typeof expected === 'object')
        expect(Object.keys(outcome.value as object)).toEqual(Object.keys(expected))
    })
  }

  it('refuses to rename onto a key that exists, and changes nothing of that value', () => {
    const value = { Biome: ['Desert'], biome: ['Fores'] }
    const outcome = applyFixes(value, place, all)
    expect(outcome.applied).toBe(0)
    expect(outcome.value).toBe(value)
    expect(outcome.refusal).toMatch(/key "biome" already exists at \$/)
    expect(applyFixes({ scores: { gren: 'hi', green: 'hi' } }, place, all).refusal).toMatch(
      /key "green" already exists at scores/,
    )
  })

  it('refuses two keys renamed onto one', () => {
    const both = checkFixes(place, [
      fix('unknown-key', '$', 'Biome', 'biome'),
      fix('unknown-key', '$', 'biomes', 'biome'),
    ])
    expect(applyFixes({ Biome: [], biomes: [] }, place, both).refusal).toMatch(/same key/)
  })

  it('a multi_enum at $ and an enum column at $', () => {
    expect(applyFixes(['Beta', 'alpha'], multi, checkFixes(multi, [fix('enum', '$', 'Beta', 'beta')]))).toEqual({
      value: ['beta', 'alpha'],
      applied: 1,
      refusal: null,
    })
    expect(applyFixes('Open', column, checkFixes(column, [fix('enum', '$', 'Open', 'open')]))).toEqual({
      value: 'open',
      applied: 1,
      refusal: null,
    })
  })
})
