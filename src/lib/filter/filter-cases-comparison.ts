import { type FilterCase } from './filter-fixture.js'

/** Equality, ordering, ranges and presence of one field. */
export const comparisonCases: readonly FilterCase[] = [
  // eq
  { name: 'shorthand equality', filter: { status: 'draft' }, matches: ['r2', 'r3'] },
  { name: '_eq string', filter: { status: { _eq: 'draft' } }, matches: ['r2', 'r3'] },
  { name: 'eq string (array)', filter: [{ field: 'status', op: 'eq', value: 'draft' }], matches: ['r2', 'r3'] },
  { name: '_eq number', filter: { age: { _eq: 25 } }, matches: ['r2'] },
  { name: 'shorthand zero', filter: { age: 0 }, matches: ['r5'] },
  { name: '_eq real', filter: { score: { _eq: 4.5 } }, matches: ['r1'] },
  { name: 'shorthand true', filter: { active: true }, matches: ['r1', 'r4', 'r6'] },
  { name: 'eq false (array)', filter: [{ field: 'active', op: 'eq', value: false }], matches: ['r2', 'r5'] },
  { name: 'shorthand null matches nothing', filter: { age: null }, matches: [] },
  { name: '_eq null matches nothing', filter: { owner: { _eq: null } }, matches: [] },
  { name: '_eq is case-sensitive', filter: { name: { _eq: 'alice' } }, matches: [] },
  { name: '_eq with a quote in the value', filter: { name: { _eq: "Dave O'Brien" } }, matches: ['r4'] },
  { name: 'SQL in a value is only a value', filter: { name: "' OR 1=1 --" }, matches: [] },
  {
    name: 'SQL in a value is only a value (array)',
    filter: [{ field: 'name', op: 'eq', value: 'x" OR "1"="1' }],
    matches: [],
  },

  // neq
  { name: '_neq string', filter: { status: { _neq: 'draft' } }, matches: ['r1', 'r4', 'r5', 'r6'] },
  {
    name: 'neq string (array)',
    filter: [{ field: 'status', op: 'neq', value: 'draft' }],
    matches: ['r1', 'r4', 'r5', 'r6'],
  },
  { name: '_neq skips null fields', filter: { age: { _neq: 25 } }, matches: ['r1', 'r4', 'r5', 'r6'] },
  { name: '_neq null matches nothing', filter: { owner: { _neq: null } }, matches: [] },

  // Orderings
  { name: '_gt number', filter: { age: { _gt: 25 } }, matches: ['r1', 'r4'] },
  { name: 'gt number (array)', filter: [{ field: 'age', op: 'gt', value: 25 }], matches: ['r1', 'r4'] },
  { name: '_gte number', filter: { age: { _gte: 25 } }, matches: ['r1', 'r2', 'r4'] },
  { name: 'gte number (array)', filter: [{ field: 'age', op: 'gte', value: 25 }], matches: ['r1', 'r2', 'r4'] },
  { name: '_lt number', filter: { age: { _lt: 25 } }, matches: ['r5', 'r6'] },
  { name: 'lt number (array)', filter: [{ field: 'age', op: 'lt', value: 25 }], matches: ['r5', 'r6'] },
  { name: '_lte number', filter: { age: { _lte: 25 } }, matches: ['r2', 'r5', 'r6'] },
  { name: 'lte number (array)', filter: [{ field: 'age', op: 'lte', value: 25 }], matches: ['r2', 'r5', 'r6'] },
  { name: '_gt real', filter: { score: { _gt: 3 } }, matches: ['r1', 'r4'] },
  { name: '_lt negative real', filter: { score: { _lt: 0 } }, matches: ['r5'] },
  { name: '_gt null matches nothing', filter: { age: { _gt: null } }, matches: [] },
  { name: '_gte date string', filter: { day: { _gte: '2023-11-14' } }, matches: ['r1', 'r2', 'r5', 'r6'] },
  {
    name: 'strings order by code point, not locale',
    filter: { name: { _gt: 'Bob' } },
    matches: ['r2', 'r3', 'r4', 'r6'],
  },
  { name: 'astral characters order above the BMP', filter: { name: { _gt: '\uff5e' } }, matches: ['r6'] },

  // between (array format only)
  {
    name: 'between is inclusive',
    filter: [{ field: 'age', op: 'between', value: 18, valueTo: 30 }],
    matches: ['r1', 'r2', 'r6'],
  },
  {
    name: 'between strings',
    filter: [{ field: 'day', op: 'between', value: '2023-11-14', valueTo: '2023-11-15' }],
    matches: ['r1', 'r2', 'r5'],
  },
  {
    name: 'between reversed bounds matches nothing',
    filter: [{ field: 'age', op: 'between', value: 30, valueTo: 18 }],
    matches: [],
  },
  {
    name: 'between with a null bound matches nothing',
    filter: [{ field: 'age', op: 'between', value: null, valueTo: 30 }],
    matches: [],
  },

  // Presence
  { name: '_null', filter: { age: { _null: true } }, matches: ['r3'] },
  { name: '_nnull', filter: { age: { _nnull: true } }, matches: ['r1', 'r2', 'r4', 'r5', 'r6'] },
  { name: 'empty: null or empty string (array)', filter: [{ field: 'note', op: 'empty' }], matches: ['r2', 'r3'] },
  {
    name: 'empty with a blank value (array)',
    filter: [{ field: 'note', op: 'empty', value: '' }],
    matches: ['r2', 'r3'],
  },
  { name: 'not_empty (array)', filter: [{ field: 'note', op: 'not_empty' }], matches: ['r1', 'r4', 'r5', 'r6'] },
  {
    name: 'not_empty with a null value (array)',
    filter: [{ field: 'note', op: 'not_empty', value: null }],
    matches: ['r1', 'r4', 'r5', 'r6'],
  },
]
