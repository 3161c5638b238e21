import { type FilterCase } from './filter-fixture.js'

/** Lists: in and nin, as JSON lists and as comma-separated text. */
export const membershipCases: readonly FilterCase[] = [
  // in, nin
  { name: '_in strings', filter: { status: { _in: ['draft', 'archived'] } }, matches: ['r2', 'r3', 'r4'] },
  { name: '_in numbers', filter: { age: { _in: [25, 40] } }, matches: ['r2', 'r4'] },
  {
    name: 'in comma-separated (array)',
    filter: [{ field: 'status', op: 'in', value: 'draft,archived' }],
    matches: ['r2', 'r3', 'r4'],
  },
  {
    name: 'in comma-separated, spaces trimmed (array)',
    filter: [{ field: 'status', op: 'in', value: 'draft , archived' }],
    matches: ['r2', 'r3', 'r4'],
  },
  { name: 'in array of numbers (array)', filter: [{ field: 'age', op: 'in', value: [25, 40] }], matches: ['r2', 'r4'] },
  { name: 'in one value (array)', filter: [{ field: 'status', op: 'in', value: 'archived' }], matches: ['r4'] },
  // A comma-separated list takes the kind of its field (the schema check converts each item).
  {
    name: 'in comma-separated integers (array)',
    filter: [{ field: 'age', op: 'in', value: '0,25' }],
    matches: ['r2', 'r5'],
  },
  {
    name: 'in comma-separated integers, spaces trimmed (array)',
    filter: [{ field: 'age', op: 'in', value: ' 40 , 18 ' }],
    matches: ['r4', 'r6'],
  },
  {
    name: 'in comma-separated numbers (array)',
    filter: [{ field: 'score', op: 'in', value: '4.5,-1.5' }],
    matches: ['r1', 'r5'],
  },
  {
    name: 'in comma-separated whole numbers on a real column (array)',
    filter: [{ field: 'score', op: 'in', value: '3,0' }],
    matches: ['r2', 'r6'],
  },
  {
    name: 'in comma-separated booleans (array)',
    filter: [{ field: 'active', op: 'in', value: 'false' }],
    matches: ['r2', 'r5'],
  },
  {
    name: 'in comma-separated dates stay text (array)',
    filter: [{ field: 'day', op: 'in', value: '2023-11-14,2020-09-13' }],
    matches: ['r1', 'r4', 'r5'],
  },
  {
    name: 'in comma-separated Unix seconds and $NOW (array)',
    filter: [{ field: 'created_at', op: 'in', value: '1600000000,$NOW' }],
    matches: ['r4', 'r5'],
  },
  {
    name: 'in comma-separated on a JSON path stays text (array)',
    filter: [{ field: 'meta.kind', op: 'in', value: 'doc,image' }],
    matches: ['r1', 'r2', 'r5'],
  },
  { name: '_in ignores a null in the list', filter: { owner: { _in: ['u3', null] } }, matches: ['r5'] },
  { name: '_nin strings', filter: { status: { _nin: ['draft'] } }, matches: ['r1', 'r4', 'r5', 'r6'] },
  { name: '_nin skips null fields', filter: { owner: { _nin: ['u1'] } }, matches: ['r2', 'r5', 'r6'] },
  { name: '_nin with a null in the list matches nothing', filter: { owner: { _nin: ['u1', null] } }, matches: [] },
]
