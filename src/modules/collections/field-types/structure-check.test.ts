import { describe, expect, it } from 'vitest'
import {
  describeIssue,
  firstIssue,
  labelIn,
  renderPath,
  shapeLocations,
  visitIssues,
  type Segment,
  type StructureIssue,
} from './structure-check.js'
import { parseStructure, type Shape } from './structure-shape.js'
import { editDistance, suggest } from './structure-suggest.js'

const shapeOf = (shape: unknown): Shape => {
  const parsed = parseStructure({ shape })
  if (!parsed.ok) throw new Error(parsed.message)
  return parsed.structure.shape
}

const place = shapeOf({
  type: 'object',
  entries: {
    biome: { type: 'list', items: { type: 'enum', values: ['Forest', 'Desert'] } },
    size: { type: 'number' },
    open: { type: 'boolean' },
    scores: { type: 'map', keys: { type: 'enum', values: ['red'] }, values: { type: 'number' } },
    'odd key': { type: 'string' },
  },
})

const issues = (value: unknown, shape = place) => {
  const out: string[] = []
  visitIssues(
    value,
    shape,
    (issue: StructureIssue) =>
      void out.push(`${issue.code} ${renderPath(issue.path, false)} ${issue.value ?? issue.got ?? ''}`.trim()),
  )
  return out
}

describe('visitIssues', () => {
  const rows: [string, unknown, string[]][] = [
    ['a matching value', { biome: ['Forest'], size: 1.5, open: false, scores: { red: 2 }, 'odd key': 'x' }, []],
    ['missing and null entries are fine', { biome: null }, []],
    ['an empty object', {}, []],
    ['a wrong enum value in a list', { biome: ['Forest', 'Fores'] }, ['enum biome[1] Fores']],
    ['every wrong item', { biome: ['x', 'y'] }, ['enum biome[0] x', 'enum biome[1] y']],
    ['a null item', { biome: [null] }, ['type biome[0] null']],
    ['a number at an enum', { biome: [3] }, ['type biome[0] a number']],
    ['a list that is a string', { biome: 'Forest' }, ['type biome a string']],
    ['a boolean that is 0', { open: 0 }, ['type open a number']],
    ['an unknown key', { Biome: [] }, ['unknown-key $ Biome']],
    [
      'a map key not allowed, and its wrong value',
      { scores: { blue: 'x' } },
      ['key scores{key} blue', 'type scores.blue a string'],
    ],
    ['a null map value', { scores: { red: null } }, ['type scores.red null']],
    ['an odd key written as a quoted name', { 'odd key': 5 }, ['type $["odd key"] a number']],
    ['not an object', [], ['type $ a list']],
    ['__proto__ is just an unknown key', JSON.parse('{"__proto__": 1}'), ['unknown-key $ __proto__']],
    ['constructor is just an unknown key', { constructor: 1 }, ['unknown-key $ constructor']],
  ]
  for (const [name, value, expected] of rows) {
    it(name, () => {
      expect(issues(value)).toEqual(expected)
    })
  }

  it('stops when the visitor says so; firstIssue is the first', () => {
    const value = { biome: ['x', 'y', 'z'] }
    let seen = 0
    visitIssues(value, place, () => ++seen < 2)
    expect(seen).toBe(2)
    expect(firstIssue(value, place)).toMatchObject({ code: 'enum', value: 'x' })
    expect(firstIssue({ biome: ['Forest'] }, place)).toBeNull()
  })

  it('an open object takes any other key', () => {
    expect(issues({ a: 1, b: [] }, shapeOf({ type: 'object', entries: {}, additional: true }))).toEqual([])
  })

  it('describes issues briefly, listing choices', () => {
    expect(describeIssue(firstIssue({ biome: ['Fores'] }, place)!)).toBe(
      '"Fores" is not an allowed value (one of "Forest", "Desert")',
    )
    expect(describeIssue(firstIssue({ x: 1 }, place)!)).toBe('unknown key "x"')
    expect(describeIssue(firstIssue({ size: '1' }, place)!)).toBe('expected a number, got a string')
  })
})

describe('renderPath', () => {
  const rows: [Segment[], string, string][] = [
    [[], '$', '$'],
    [[{ kind: 'entry', key: 'a' }], 'a', 'a'],
    [
      [
        { kind: 'entry', key: 'a' },
        { kind: 'entry', key: 'b-c' },
      ],
      'a.b-c',
      'a.b-c',
    ],
    [[{ kind: 'item', index: 3 }], '$[3]', '$[]'],
    [
      [
        { kind: 'entry', key: 'a' },
        { kind: 'item', index: 0 },
        { kind: 'entry', key: 'b' },
      ],
      'a[0].b',
      'a[].b',
    ],
    [
      [
        { kind: 'entry', key: 'm' },
        { kind: 'value', key: 'fr' },
      ],
      'm.fr',
      'm{}',
    ],
    [[{ kind: 'entry', key: 'm' }, { kind: 'keys' }], 'm{key}', 'm{key}'],
    [[{ kind: 'entry', key: 'a b' }], '$["a b"]', '$["a b"]'],
    [[{ kind: 'entry', key: '1st' }], '$["1st"]', '$["1st"]'],
    [
      [
        { kind: 'entry', key: 'a' },
        { kind: 'entry', key: 'x y' },
      ],
      'a["x y"]',
      'a["x y"]',
    ],
  ]
  for (const [segments, concrete, collapsed] of rows) {
    it(`${concrete} / ${collapsed}`, () => {
      expect(renderPath(segments, false)).toBe(concrete)
      expect(renderPath(segments, true)).toBe(collapsed)
    })
  }
})

describe('shapeLocations', () => {
  it('lists every location with its collapsed path; list items and map keys are multiple', () => {
    const locations = shapeLocations(place).map((l) => [l.path, l.shape.type, l.multiple, l.entryKey])
    expect(locations).toEqual([
      ['$', 'object', false, null],
      ['biome', 'list', false, 'biome'],
      ['biome[]', 'enum', true, 'biome'],
      ['size', 'number', false, 'size'],
      ['open', 'boolean', false, 'open'],
      ['scores', 'map', false, 'scores'],
      ['scores{key}', 'enum', true, 'scores'],
      ['scores{}', 'number', false, 'scores'],
      ['$["odd key"]', 'string', false, 'odd key'],
    ])
  })
})

describe('labelIn', () => {
  const map = { en: 'Forest', de: 'Wald', 'pt-BR': 'Floresta' }
  const rows: [unknown, string, string | null, string | null][] = [
    [undefined, 'en', 'en', null],
    ['Plain', 'de', 'en', 'Plain'],
    [map, 'de', 'en', 'Wald'],
    [map, 'de-AT', 'en', 'Wald'],
    [map, 'PT-br', 'en', 'Floresta'],
    [map, 'fr', 'en', 'Forest'],
    [map, 'fr', 'en-GB', 'Forest'],
    [map, 'fr', 'it', null],
    [{ de: 'Wald' }, 'fr', 'en', null],
  ]
  for (const [label, locale, fallback, expected] of rows) {
    it(`${JSON.stringify(label)} in ${locale} (fallback ${fallback}) → ${expected}`, () => {
      expect(labelIn(label as never, locale, fallback)).toBe(expected)
    })
  }
})

describe('suggest', () => {
  const allowed = ['Forest', 'Desert', 'Rain-forest', 'Tundra', 'Taiga', 'Bog']
  const rows: [string, string | null][] = [
    ['forest', 'Forest'],
    [' Forest ', 'Forest'],
    ['rain_forest', 'Rain-forest'],
    ['RAIN FOREST', 'Rain-forest'],
    ['Fores', 'Forest'],
    ['Froest', 'Forest'],
    ['Desrt', 'Desert'],
    ['Tiaga', 'Taiga'],
    ['Bgo', 'Bog'],
    ['Jungle', null],
    ['Forest', null],
    ['x', null],
    ['', null],
    ['B', null],
  ]
  for (const [value, expected] of rows) {
    it(`${JSON.stringify(value)} → ${expected}`, () => {
      expect(suggest(value, allowed)).toBe(expected)
    })
  }

  it('two equally near candidates suggest nothing', () => {
    expect(suggest('cat', ['bat', 'hat'])).toBeNull()
    expect(suggest('Red', ['red', 'RED'])).toBeNull()
  })

  it('edit distance counts a transposition as one and stops past the limit', () => {
    expect(editDistance('abcd', 'abdc', 3)).toBe(1)
    expect(editDistance('kitten', 'sitting', 3)).toBe(3)
    expect(editDistance('kitten', 'sitting', 2)).toBe(Infinity)
    expect(editDistance('a', 'abcdef', 2)).toBe(Infinity)
  })
})
