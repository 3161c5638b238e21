import { allIds, type FilterCase } from './filter-fixture.js'

/** Empty filters and the combinators: several keys, _and, _or, array elements, nesting. */
export const logicCases: readonly FilterCase[] = [
  // Empty filters
  { name: 'empty object matches all', filter: {}, matches: allIds },
  { name: 'empty array matches all', filter: [], matches: allIds },

  // Combinators
  { name: 'several keys mean AND', filter: { status: 'published', age: { _lt: 20 } }, matches: ['r5', 'r6'] },
  { name: 'several operators on one field mean AND', filter: { age: { _gte: 18, _lt: 30 } }, matches: ['r2', 'r6'] },
  { name: '_and', filter: { _and: [{ status: 'published' }, { active: true }] }, matches: ['r1', 'r6'] },
  { name: '_and of one', filter: { _and: [{ age: 25 }] }, matches: ['r2'] },
  { name: '_or', filter: { _or: [{ status: 'draft' }, { age: { _gt: 35 } }] }, matches: ['r2', 'r3', 'r4'] },
  { name: '_or over nulls', filter: { _or: [{ age: { _gt: 100 } }, { age: { _lt: 1 } }] }, matches: ['r5'] },
  {
    name: '_and inside _or',
    filter: { _or: [{ _and: [{ status: 'draft' }, { age: { _nnull: true } }] }, { name: { _starts_with: 'D' } }] },
    matches: ['r2', 'r4'],
  },
  {
    name: 'field and _or side by side',
    filter: { project: 'p1', _or: [{ owner: 'u1' }, { owner: { _null: true } }] },
    matches: ['r1', 'r3', 'r4'],
  },
  {
    name: '_and and _or side by side',
    filter: { _and: [{ age: { _nnull: true } }], _or: [{ status: 'archived' }, { score: { _lte: 0 } }] },
    matches: ['r4', 'r5', 'r6'],
  },
  {
    name: 'array elements mean AND',
    filter: [
      { field: 'status', op: 'eq', value: 'published' },
      { field: 'age', op: 'gt', value: 10 },
    ],
    matches: ['r1', 'r6'],
  },
  {
    name: 'eight levels of nesting',
    filter: { _and: [{ _or: [{ _and: [{ _or: [{ _and: [{ _or: [{ _and: [{ _or: [{ age: 40 }] }] }] }] }] }] }] }] },
    matches: ['r4'],
  },
]
