import { allIds, type FilterCase } from './filter-fixture.js'

/** Dotted paths into JSON columns. */
export const pathCases: readonly FilterCase[] = [
  // Dotted paths into JSON
  { name: 'dotted path shorthand', filter: { 'meta.size': 10 }, matches: ['r1', 'r4'] },
  { name: 'dotted path _gt', filter: { 'meta.size': { _gt: 10 } }, matches: ['r2'] },
  {
    name: 'dotted path lte (array)',
    filter: [{ field: 'meta.size', op: 'lte', value: 10 }],
    matches: ['r1', 'r4', 'r6'],
  },
  { name: 'dotted path string', filter: { 'meta.kind': 'image' }, matches: ['r1', 'r5'] },
  { name: 'dotted path two levels', filter: { 'meta.dims.w': { _gte: 1000 } }, matches: ['r6'] },
  {
    name: 'dotted path: JSON null, missing key and null column are null',
    filter: { 'meta.kind': { _null: true } },
    matches: ['r3', 'r4', 'r6'],
  },
  { name: 'dotted path _nnull', filter: { 'meta.size': { _nnull: true } }, matches: ['r1', 'r2', 'r4', 'r6'] },
  { name: 'dotted path through a missing object', filter: { 'meta.missing.deep': { _null: true } }, matches: allIds },
  { name: 'dotted path _in', filter: { 'meta.kind': { _in: ['doc', 'image'] } }, matches: ['r1', 'r2', 'r5'] },
]
