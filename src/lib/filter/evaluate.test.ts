import { describe, expect, it } from 'vitest'
import {
  compareBetween,
  compareList,
  comparePresence,
  compareValue,
  literal,
  matchNone,
  type ResolvedFilterNode,
  type Scalar,
} from './ast.js'
import { checkFilter } from './check-filter.js'
import { evaluateFilter } from './evaluate.js'
import { createSchemaResolver } from './field-resolver.js'
import { filterCases, filterContext, filterRecords, filterSchema } from './filter-cases.js'
import { parseFilter } from './parse.js'
import { resolveVariables } from './variables.js'
import type { FilterNode } from './ast.js'

const schema = createSchemaResolver(filterSchema)

// As a request's filter: parsed, checked against the schema, resolved for the caller.
const matching = (filter: unknown, context = filterContext): string[] => {
  const node = resolveVariables(checkFilter(parseFilter(filter), schema), context)
  return filterRecords.filter((record) => evaluateFilter(node, record)).map((record) => String(record.id))
}

describe('evaluateFilter: the shared filter cases', () => {
  it.each(filterCases)('$name', ({ filter, context, matches }) => {
    expect(matching(filter, context)).toEqual(matches)
    expect(matching(JSON.stringify(filter), context)).toEqual(matches)
  })

  it('the filter that matches nothing matches no record', () => {
    expect(filterRecords.filter((record) => evaluateFilter(matchNone(), record))).toEqual([])
  })

  it('cover every operator of both formats', () => {
    const seen = { object: new Set<string>(), array: new Set<string>() }
    const walk = (node: FilterNode, into: Set<string>): void => {
      if (node.kind === 'compare') into.add(node.op)
      else node.items.forEach((item) => walk(item, into))
    }
    for (const { filter } of filterCases) walk(parseFilter(filter), Array.isArray(filter) ? seen.array : seen.object)
    expect([...seen.object].sort()).toEqual(
      [
        'eq',
        'neq',
        'gt',
        'gte',
        'lt',
        'lte',
        'in',
        'nin',
        'contains',
        'ncontains',
        'starts_with',
        'nstarts_with',
        'ends_with',
        'nends_with',
        'is_null',
        'not_null',
      ].sort(),
    )
    expect([...seen.array].sort()).toEqual(
      [
        'eq',
        'neq',
        'gt',
        'gte',
        'lt',
        'lte',
        'contains',
        'starts_with',
        'ends_with',
        'between',
        'in',
        'empty',
        'not_empty',
      ].sort(),
    )
  })
})

// Semantics the shared table leaves out because the schema check refuses or converts such filters before
// they reach SQL; the evaluator still has to give an answer, and this is it.
describe('evaluateFilter: values of other types and shapes', () => {
  const f = ['v'] as const
  const eq = (value: Scalar) => compareValue(f, 'eq', literal(value))
  const rows: { name: string; node: ResolvedFilterNode; field: unknown; expected: boolean }[] = [
    { name: '1 is not "1"', node: eq('1'), field: 1, expected: false },
    { name: '"1" is not 1', node: eq(1), field: '1', expected: false },
    { name: 'true is not 1', node: eq(1), field: true, expected: false },
    { name: 'neq across types is true', node: compareValue(f, 'neq', literal('1')), field: 1, expected: true },
    { name: 'gt across types is false', node: compareValue(f, 'gt', literal('0')), field: 1, expected: false },
    { name: 'lt across types is false', node: compareValue(f, 'lt', literal('9')), field: 1, expected: false },
    { name: 'booleans order false < true', node: compareValue(f, 'gt', literal(false)), field: true, expected: true },
    { name: 'in across types', node: compareList(f, 'in', [literal('1')]), field: 1, expected: false },
    { name: 'nin across types', node: compareList(f, 'nin', [literal('1')]), field: 1, expected: true },
    { name: 'between across types', node: compareBetween(f, literal('a'), literal('z')), field: 5, expected: false },
    {
      name: 'contains a number in a string',
      node: compareValue(f, 'contains', literal(1)),
      field: '123',
      expected: false,
    },
    {
      name: 'ncontains a number in a string',
      node: compareValue(f, 'ncontains', literal(1)),
      field: '123',
      expected: false,
    },
    { name: 'contains on a number', node: compareValue(f, 'contains', literal('1')), field: 123, expected: false },
    { name: 'ncontains on a number', node: compareValue(f, 'ncontains', literal('1')), field: 123, expected: false },
    {
      name: 'contains a number in an array',
      node: compareValue(f, 'contains', literal(2)),
      field: [1, 2],
      expected: true,
    },
    {
      name: 'array membership does not coerce',
      node: compareValue(f, 'contains', literal('2')),
      field: [1, 2],
      expected: false,
    },
    {
      name: 'contains null in an array holding null',
      node: compareValue(f, 'contains', literal(null)),
      field: [null],
      expected: false,
    },
    { name: 'ncontains null', node: compareValue(f, 'ncontains', literal(null)), field: ['a'], expected: false },
    {
      name: 'contains does not search objects',
      node: compareValue(f, 'contains', literal('a')),
      field: { a: 'a' },
      expected: false,
    },
    {
      name: 'starts_with on an array',
      node: compareValue(f, 'starts_with', literal('a')),
      field: ['a'],
      expected: false,
    },
    {
      name: 'nstarts_with on a number',
      node: compareValue(f, 'nstarts_with', literal('1')),
      field: 23,
      expected: false,
    },
    { name: 'eq on an array', node: eq('a'), field: ['a'], expected: false },
    { name: 'neq on an array', node: compareValue(f, 'neq', literal('a')), field: ['b'], expected: false },
    { name: 'neq on an object', node: compareValue(f, 'neq', literal('a')), field: {}, expected: false },
    { name: 'in on an array', node: compareList(f, 'in', [literal('a')]), field: ['a'], expected: false },
    { name: 'nin on an object', node: compareList(f, 'nin', [literal('a')]), field: {}, expected: false },
    { name: 'gt on an array', node: compareValue(f, 'gt', literal(0)), field: [1], expected: false },
    { name: 'empty array is not empty', node: comparePresence(f, 'empty'), field: [], expected: false },
    { name: 'empty object is not null', node: comparePresence(f, 'is_null'), field: {}, expected: false },
    { name: 'undefined is null', node: comparePresence(f, 'is_null'), field: undefined, expected: true },
    { name: 'undefined is empty', node: comparePresence(f, 'empty'), field: undefined, expected: true },
    { name: 'undefined fails neq', node: compareValue(f, 'neq', literal('a')), field: undefined, expected: false },
    { name: 'whitespace is not empty', node: comparePresence(f, 'not_empty'), field: ' ', expected: true },
    { name: 'NaN equals nothing', node: eq(1), field: Number.NaN, expected: false },
    { name: '-0 equals 0', node: eq(0), field: -0, expected: true },
    {
      name: 'UTF-16 order is not code point order',
      node: compareValue(f, 'lt', literal('\uff5e')),
      field: '\u{1f600}',
      expected: false,
    },
    {
      name: 'code point order across the BMP',
      node: compareValue(f, 'gt', literal('\ue000')),
      field: '\u{10000}',
      expected: true,
    },
    { name: 'a prefix orders first', node: compareValue(f, 'lt', literal('ab')), field: 'a', expected: true },
  ]
  it.each(rows)('$name', ({ node, field, expected }) => {
    expect(evaluateFilter(node, { v: field })).toBe(expected)
  })
})

describe('evaluateFilter: paths', () => {
  const path = (field: [string, ...string[]]) => comparePresence(field, 'not_null')
  const rows: { name: string; node: ResolvedFilterNode; record: Record<string, unknown>; expected: boolean }[] = [
    { name: 'missing column is null', node: path(['v']), record: {}, expected: false },
    {
      name: 'inherited properties are not read',
      node: path(['v']),
      record: Object.create({ v: 1 }) as Record<string, unknown>,
      expected: false,
    },
    { name: 'toString is not a column', node: path(['toString']), record: {}, expected: false },
    { name: 'walks nested objects', node: path(['a', 'b', 'c']), record: { a: { b: { c: 0 } } }, expected: true },
    { name: 'does not walk into strings', node: path(['a', 'length']), record: { a: 'text' }, expected: false },
    { name: 'does not walk into arrays', node: path(['a', 'length']), record: { a: [1] }, expected: false },
    { name: 'does not walk through null', node: path(['a', 'b']), record: { a: null }, expected: false },
    {
      name: 'reads null-prototype objects',
      node: path(['a', 'b']),
      record: { a: Object.assign(Object.create(null) as object, { b: 1 }) },
      expected: true,
    },
  ]
  it.each(rows)('$name', ({ node, record, expected }) => {
    expect(evaluateFilter(node, record)).toBe(expected)
  })
})
