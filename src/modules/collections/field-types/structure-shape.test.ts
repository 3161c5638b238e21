import { describe, expect, it } from 'vitest'
import { parseStructure, shapeWidens, withoutLabels, type Shape } from './structure-shape.js'

const parse = (input: unknown) => parseStructure(input)
const shapeOf = (shape: unknown): Shape => {
  const parsed = parseStructure({ shape })
  if (!parsed.ok) throw new Error(`${parsed.path.join('.')}: ${parsed.message}`)
  return parsed.structure.shape
}

describe('parseStructure accepts and normalises', () => {
  const rows: [string, unknown, unknown][] = [
    [
      'a scalar, enforcement defaulting to warn',
      { shape: { type: 'string' } },
      { enforcement: 'warn', shape: { type: 'string' } },
    ],
    [
      'each enforcement',
      { enforcement: 'strict', shape: { type: 'number' } },
      { enforcement: 'strict', shape: { type: 'number' } },
    ],
    [
      'enum values as strings or objects',
      { shape: { type: 'enum', values: ['a', { value: 'b', label: 'Bee' }] } },
      { enforcement: 'warn', shape: { type: 'enum', values: [{ value: 'a' }, { value: 'b', label: 'Bee' }] } },
    ],
    [
      'an object, additional defaulting to false',
      { shape: { type: 'object', entries: { a: { type: 'boolean' } } } },
      { enforcement: 'warn', shape: { type: 'object', entries: { a: { type: 'boolean' } }, additional: false } },
    ],
    [
      'an object without entries',
      { shape: { type: 'object', additional: true } },
      { enforcement: 'warn', shape: { type: 'object', entries: {}, additional: true } },
    ],
    [
      'a localised label',
      { shape: { type: 'list', label: { en: 'Tags', 'pt-BR': 'Etiquetas' }, items: { type: 'string' } } },
      {
        enforcement: 'warn',
        shape: { type: 'list', label: { en: 'Tags', 'pt-BR': 'Etiquetas' }, items: { type: 'string' } },
      },
    ],
    [
      'a map',
      { shape: { type: 'map', keys: { type: 'enum', values: ['x'] }, values: { type: 'number' } } },
      {
        enforcement: 'warn',
        shape: { type: 'map', keys: { type: 'enum', values: [{ value: 'x' }] }, values: { type: 'number' } },
      },
    ],
  ]
  for (const [name, input, expected] of rows) {
    it(name, () => {
      expect(parse(input)).toEqual({ ok: true, structure: expected })
    })
  }

  it('an entry named __proto__ stays an own entry', () => {
    const parsed = parse(JSON.parse('{"shape":{"type":"object","entries":{"__proto__":{"type":"string"}}}}'))
    expect(parsed.ok).toBe(true)
    if (parsed.ok && parsed.structure.shape.type === 'object') {
      expect(Object.hasOwn(parsed.structure.shape.entries, '__proto__')).toBe(true)
      expect(Object.getPrototypeOf(parsed.structure.shape.entries)).toBe(Object.prototype)
    }
  })
})

describe('parseStructure refuses, naming the path', () => {
  const deep = (levels: number): unknown =>
    levels === 0 ? { type: 'string' } : { type: 'list', items: deep(levels - 1) }
  const rows: [string, unknown, string][] = [
    ['not an object', null, ''],
    ['an array', [], ''],
    ['an unknown key', { shape: { type: 'string' }, label: 'x' }, 'label'],
    ['a bad enforcement', { enforcement: 'on', shape: { type: 'string' } }, 'enforcement'],
    ['no shape', {}, 'shape'],
    ['a shape that is a string', { shape: 'string' }, 'shape'],
    ['an unknown type', { shape: { type: 'integer' } }, 'shape.type'],
    ['a property of another type', { shape: { type: 'string', items: {} } }, 'shape.items'],
    ['enum without values', { shape: { type: 'enum' } }, 'shape.values'],
    ['an empty enum value', { shape: { type: 'enum', values: [''] } }, 'shape.values.0.value'],
    ['a too long enum value', { shape: { type: 'enum', values: ['x'.repeat(201)] } }, 'shape.values.0.value'],
    ['an enum value with NUL', { shape: { type: 'enum', values: ['a\u0000'] } }, 'shape.values.0.value'],
    ['a repeated enum value', { shape: { type: 'enum', values: ['a', 'b', 'a'] } }, 'shape.values.2.value'],
    [
      'an unknown enum value key',
      { shape: { type: 'enum', values: [{ value: 'a', colour: 'red' }] } },
      'shape.values.0.colour',
    ],
    [
      'too many enum values',
      { shape: { type: 'enum', values: Array.from({ length: 1001 }, (_, i) => `v${i}`) } },
      'shape.values',
    ],
    ['an empty label', { shape: { type: 'string', label: '' } }, 'shape.label'],
    ['an empty label map', { shape: { type: 'string', label: {} } }, 'shape.label'],
    ['a label map with a number', { shape: { type: 'string', label: { en: 1 } } }, 'shape.label.en'],
    ['entries that are a list', { shape: { type: 'object', entries: [] } }, 'shape.entries'],
    ['an empty entry key', { shape: { type: 'object', entries: { '': { type: 'string' } } } }, 'shape.entries.'],
    ['a bad entry shape', { shape: { type: 'object', entries: { a: { type: 'list' } } } }, 'shape.entries.a.items'],
    ['additional not a boolean', { shape: { type: 'object', additional: 1 } }, 'shape.additional'],
    [
      'map keys of another type',
      { shape: { type: 'map', keys: { type: 'string' }, values: { type: 'string' } } },
      'shape.keys.type',
    ],
    ['map without values', { shape: { type: 'map', keys: { type: 'enum', values: ['a'] } } }, 'shape.values'],
    [
      '17 levels',
      { shape: deep(16) },
      'shape.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items',
    ],
  ]
  for (const [name, input, path] of rows) {
    it(name, () => {
      const parsed = parse(input)
      expect(parsed.ok).toBe(false)
      if (!parsed.ok) expect(parsed.path.join('.')).toBe(path)
    })
  }

  it('more than 2000 nodes', () => {
    const entries = Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [
        `e${i}`,
        {
          type: 'list',
          items: { type: 'list', items: { type: 'list', items: { type: 'list', items: { type: 'string' } } } },
        },
      ]),
    )
    const parsed = parse({ shape: { type: 'object', entries } })
    expect(parsed.ok).toBe(false)
  })
})

describe('shapeWidens', () => {
  const e = (...values: string[]) => ({ type: 'enum', values })
  const rows: [string, unknown, unknown, boolean][] = [
    ['the same shape', e('a'), e('a'), true],
    ['an added enum value', e('a'), e('a', 'b'), true],
    ['a removed enum value', e('a', 'b'), e('a'), false],
    ['enum to string', e('a'), { type: 'string' }, true],
    ['string to enum', { type: 'string' }, e('a'), false],
    ['a scalar to another', { type: 'number' }, { type: 'string' }, false],
    [
      'an added entry of a closed object',
      { type: 'object', entries: { a: e('x') } },
      { type: 'object', entries: { a: e('x'), b: { type: 'number' } } },
      true,
    ],
    [
      'a removed entry of a closed object',
      { type: 'object', entries: { a: e('x'), b: e('y') } },
      { type: 'object', entries: { a: e('x') } },
      false,
    ],
    [
      'a removed entry, the object opened',
      { type: 'object', entries: { a: e('x'), b: e('y') } },
      { type: 'object', entries: { a: e('x') }, additional: true },
      true,
    ],
    ['an object closed', { type: 'object', entries: {}, additional: true }, { type: 'object', entries: {} }, false],
    [
      'a new entry in an open object',
      { type: 'object', entries: {}, additional: true },
      { type: 'object', entries: { a: { type: 'string' } }, additional: true },
      false,
    ],
    [
      'a narrowed entry',
      { type: 'object', entries: { a: e('x', 'y') } },
      { type: 'object', entries: { a: e('x') } },
      false,
    ],
    ['list items widened', { type: 'list', items: e('a') }, { type: 'list', items: e('a', 'b') }, true],
    ['list to object', { type: 'list', items: e('a') }, { type: 'object', entries: {} }, false],
    [
      'map keys added',
      { type: 'map', keys: e('a'), values: { type: 'number' } },
      { type: 'map', keys: e('a', 'b'), values: { type: 'number' } },
      true,
    ],
    [
      'map keys removed',
      { type: 'map', keys: e('a', 'b'), values: { type: 'number' } },
      { type: 'map', keys: e('a'), values: { type: 'number' } },
      false,
    ],
  ]
  for (const [name, before, after, widens] of rows) {
    it(`${name}: ${widens}`, () => {
      expect(shapeWidens(shapeOf(before), shapeOf(after))).toBe(widens)
    })
  }

  it('labels never matter', () => {
    const labelled = shapeOf({ type: 'enum', label: { en: 'A' }, values: [{ value: 'a', label: 'Aa' }] })
    expect(withoutLabels(labelled)).toEqual({ type: 'enum', values: [{ value: 'a' }] })
  })
})
