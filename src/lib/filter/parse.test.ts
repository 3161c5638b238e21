import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { hostileFilters } from './hostile-filters.js'
import { filterLimits } from './limits.js'
import { parseFilter } from './parse.js'
import type { FilterNode } from './ast.js'

const refusal = (input: unknown): AppError => {
  try {
    parseFilter(input)
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    return err as AppError
  }
  throw new Error('expected the filter to be refused')
}

const isDeepFrozen = (value: unknown): boolean =>
  typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen))

describe('parseFilter: the AST', () => {
  const rows: { name: string; input: unknown; ast: FilterNode }[] = [
    { name: 'empty object', input: {}, ast: { kind: 'and', items: [] } },
    { name: 'empty array', input: [], ast: { kind: 'and', items: [] } },
    { name: 'empty object as JSON', input: ' {} ', ast: { kind: 'and', items: [] } },
    {
      name: 'shorthand',
      input: { status: 'draft' },
      ast: { kind: 'compare', field: ['status'], op: 'eq', value: { kind: 'literal', value: 'draft' } },
    },
    {
      name: 'dotted path',
      input: '{"meta.dims.w":{"_gt":1}}',
      ast: { kind: 'compare', field: ['meta', 'dims', 'w'], op: 'gt', value: { kind: 'literal', value: 1 } },
    },
    {
      name: 'several operators',
      input: { age: { _gte: 1, _null: true } },
      ast: {
        kind: 'and',
        items: [
          { kind: 'compare', field: ['age'], op: 'gte', value: { kind: 'literal', value: 1 } },
          { kind: 'compare', field: ['age'], op: 'is_null' },
        ],
      },
    },
    {
      name: 'combinators keep their kind',
      input: { _or: [{ a: 1 }], _and: [{ b: { _nnull: true } }] },
      ast: {
        kind: 'and',
        items: [
          { kind: 'or', items: [{ kind: 'compare', field: ['a'], op: 'eq', value: { kind: 'literal', value: 1 } }] },
          { kind: 'and', items: [{ kind: 'compare', field: ['b'], op: 'not_null' }] },
        ],
      },
    },
    {
      name: 'list with a variable',
      input: { owner: { _nin: ['$CURRENT_USER', null] } },
      ast: {
        kind: 'compare',
        field: ['owner'],
        op: 'nin',
        values: [
          { kind: 'variable', name: '$CURRENT_USER' },
          { kind: 'literal', value: null },
        ],
      },
    },
    {
      name: 'array format between',
      input: [{ field: 'created_at', op: 'between', value: 0, valueTo: '$NOW' }],
      ast: {
        kind: 'compare',
        field: ['created_at'],
        op: 'between',
        from: { kind: 'literal', value: 0 },
        to: { kind: 'variable', name: '$NOW' },
      },
    },
    {
      // Still text, marked for the schema check to convert to the field's kind.
      name: 'array format in from a comma list',
      input: [{ field: 'tag', op: 'in', value: 'a, b,,c' }],
      ast: {
        kind: 'compare',
        field: ['tag'],
        op: 'in',
        values: ['a', 'b', '', 'c'].map((value) => ({ kind: 'literal', value })),
        split: true,
      },
    },
    {
      name: 'array format in from an array is not marked',
      input: [{ field: 'tag', op: 'in', value: ['1', 2] }],
      ast: {
        kind: 'compare',
        field: ['tag'],
        op: 'in',
        values: [
          { kind: 'literal', value: '1' },
          { kind: 'literal', value: 2 },
        ],
      },
    },
    {
      name: 'array format elements are ANDed',
      input: [
        { field: 'a', op: 'empty' },
        { field: 'b', op: 'not_empty', value: '' },
      ],
      ast: {
        kind: 'and',
        items: [
          { kind: 'compare', field: ['a'], op: 'empty' },
          { kind: 'compare', field: ['b'], op: 'not_empty' },
        ],
      },
    },
    {
      name: 'field names may start with an underscore',
      input: { _version: 2 },
      ast: { kind: 'compare', field: ['_version'], op: 'eq', value: { kind: 'literal', value: 2 } },
    },
  ]

  it.each(rows)('$name', ({ input, ast }) => {
    const node = parseFilter(input)
    expect(node).toEqual(ast)
    expect(isDeepFrozen(node)).toBe(true)
  })

  it('gives the same AST for a value and its JSON', () => {
    const filter = { _or: [{ 'meta.size': { _in: [1, 2] } }, { name: { _starts_with: 'a' } }], owner: '$CURRENT_USER' }
    expect(parseFilter(JSON.stringify(filter))).toEqual(parseFilter(filter))
  })

  it('gives the same AST for both formats', () => {
    expect(
      parseFilter([
        { field: 'age', op: 'gte', value: 3 },
        { field: 'tag', op: 'in', value: ['x'] },
      ]),
    ).toEqual(parseFilter({ age: { _gte: 3 }, tag: { _in: ['x'] } }))
  })

  it('leaves its input alone', () => {
    const filter = { _or: [{ a: { _in: [1] } }] }
    const copy = structuredClone(filter)
    parseFilter(filter)
    expect(filter).toEqual(copy)
  })

  const dollars: { input: string; variable: boolean }[] = [
    { input: '$NOW', variable: true },
    { input: '$NOW_DATE', variable: true },
    { input: '$lower', variable: false },
    { input: '$5', variable: false },
    { input: '$NOW ', variable: false },
    { input: ' $NOW', variable: false },
    { input: 'USD $', variable: false },
    { input: '$', variable: false },
    { input: '$$NOW', variable: false },
  ]
  it.each(dollars)('"$input" is a variable: $variable', ({ input, variable }) => {
    expect(parseFilter({ a: input })).toMatchObject({ value: { kind: variable ? 'variable' : 'literal' } })
  })
})

// Four string fields, the last padded so that the document is exactly `bytes` long.
const jsonOfBytes = (bytes: number): string => {
  const head = { a: 'x'.repeat(4090), b: 'x'.repeat(4090), c: 'x'.repeat(4090) }
  const overhead = JSON.stringify({ ...head, d: '' }).length
  return JSON.stringify({ ...head, d: 'x'.repeat(bytes - overhead) })
}

describe('parseFilter: limits are inclusive', () => {
  const nested = (levels: number): unknown => {
    let filter: unknown = { age: 1 }
    for (let i = 0; i < levels; i += 1) filter = { _or: [filter] }
    return filter
  }
  const rows: { name: string; input: unknown }[] = [
    { name: `depth ${filterLimits.maxDepth}`, input: nested(filterLimits.maxDepth) },
    {
      name: `${filterLimits.maxConditions} conditions`,
      input: Object.fromEntries(Array.from({ length: filterLimits.maxConditions }, (_, i) => [`f${i}`, i])),
    },
    {
      name: `${filterLimits.maxConditions} conditions (array)`,
      input: Array.from({ length: filterLimits.maxConditions }, (_, i) => ({ field: `f${i}`, op: 'eq', value: i })),
    },
    {
      name: `${filterLimits.maxListValues} values`,
      input: { a: { _in: Array.from({ length: filterLimits.maxListValues }, (_, i) => i) } },
    },
    {
      name: `${filterLimits.maxStringLength}-character string`,
      input: { a: 'x'.repeat(filterLimits.maxStringLength) },
    },
    { name: 'JSON of exactly the byte limit', input: jsonOfBytes(filterLimits.maxJsonBytes) },
    { name: '64-character segment', input: { ['a'.repeat(64)]: 1 } },
    { name: `${filterLimits.maxPathSegments} segments`, input: { 'a.b.c.d.e.f.g.h': 1 } },
  ]
  it.each(rows)('accepts $name', ({ input }) => {
    if (typeof input === 'string') expect(Buffer.byteLength(input)).toBeLessThanOrEqual(filterLimits.maxJsonBytes)
    expect(() => parseFilter(input)).not.toThrow()
  })

  it('refuses one byte more', () => {
    const input = jsonOfBytes(filterLimits.maxJsonBytes + 1)
    expect(Buffer.byteLength(input)).toBe(filterLimits.maxJsonBytes + 1)
    expect(refusal(input).message).toBe(`filter: longer than ${filterLimits.maxJsonBytes} bytes`)
  })
})

describe('parseFilter: hostile input', () => {
  it.each(hostileFilters)('refuses $name', ({ input, path }) => {
    const err = refusal(input)
    expect(err.code).toBe('invalid_request')
    expect(err.status).toBe(400)
    expect(typeof err.details.path).toBe('string')
    expect(err.message.startsWith(`${String(err.details.path)}: `)).toBe(true)
    // Input is never echoed at length.
    expect(err.message.length).toBeLessThan(200)
    if (path !== undefined) expect(err.details.path).toBe(path)
  })

  it('never pollutes Object.prototype', () => {
    for (const { input } of hostileFilters) {
      try {
        parseFilter(input)
      } catch {
        // refused, as the table above checks
      }
    }
    expect(Object.prototype).not.toHaveProperty('polluted')
    expect(({} as Record<string, unknown>).age).toBeUndefined()
  })

  it('names where the filter is wrong', () => {
    expect(refusal({ _or: [{ age: 1 }, { age: { _like: 'x' } }] }).message).toBe(
      'filter._or[1].age: unknown operator "_like"',
    )
    expect(refusal({ age: { _gt: [1] } }).message).toBe(
      'filter.age._gt: value must be a string, number, boolean or null',
    )
    expect(
      refusal([
        { field: 'a', op: 'eq', value: 1 },
        { field: 'b', op: 'like' },
      ]).message,
    ).toBe('filter[1].op: unknown op "like"')
    expect(refusal({ owner: '$CURRENT_USR' }).message).toBe('filter.owner: unknown variable "$CURRENT_USR"')
  })
})
