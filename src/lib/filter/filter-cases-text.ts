import { type FilterCase } from './filter-fixture.js'

/** Substrings: contains, starts_with, ends_with and their negations, LIKE characters taken literally. */
export const textCases: readonly FilterCase[] = [
  // contains, starts_with, ends_with and their negations
  { name: '_contains is case-sensitive', filter: { note: { _contains: 'hello' } }, matches: ['r1', 'r6'] },
  { name: 'contains (array)', filter: [{ field: 'name', op: 'contains', value: 'o' }], matches: ['r2', 'r3'] },
  { name: '_contains a quote', filter: { name: { _contains: "'" } }, matches: ['r4'] },
  { name: '_contains % is literal', filter: { name: { _contains: '%' } }, matches: ['r5'] },
  { name: '_contains _ is literal', filter: { name: { _contains: '_' } }, matches: ['r5'] },
  { name: '_contains a%c is not a LIKE pattern', filter: { note: { _contains: 'a%c' } }, matches: [] },
  { name: '_contains _b% is literal', filter: { note: { _contains: '_b%' } }, matches: ['r5'] },
  {
    name: '_contains empty string matches every string',
    filter: { note: { _contains: '' } },
    matches: ['r1', 'r2', 'r4', 'r5', 'r6'],
  },
  { name: '_contains on a JSON array tests membership', filter: { tags: { _contains: 'b' } }, matches: ['r1', 'r4'] },
  { name: '_contains % on a JSON array', filter: { tags: { _contains: '%' } }, matches: ['r5'] },
  { name: '_ncontains skips null fields', filter: { note: { _ncontains: 'hello' } }, matches: ['r2', 'r4', 'r5'] },
  { name: '_ncontains on a JSON array', filter: { tags: { _ncontains: 'b' } }, matches: ['r2', 'r5', 'r6'] },
  { name: '_starts_with', filter: { name: { _starts_with: 'Al' } }, matches: ['r1'] },
  { name: 'starts_with (array)', filter: [{ field: 'name', op: 'starts_with', value: 'Al' }], matches: ['r1'] },
  { name: '_starts_with is case-sensitive', filter: { name: { _starts_with: 'al' } }, matches: [] },
  { name: '_starts_with % is literal', filter: { name: { _starts_with: '100%' } }, matches: ['r5'] },
  { name: '_starts_with _ is not a wildcard', filter: { name: { _starts_with: '1_0' } }, matches: [] },
  { name: '_nstarts_with', filter: { note: { _nstarts_with: 'h' } }, matches: ['r2', 'r4', 'r5'] },
  { name: '_ends_with', filter: { name: { _ends_with: 'ol' } }, matches: ['r3'] },
  { name: 'ends_with (array)', filter: [{ field: 'name', op: 'ends_with', value: 'ol' }], matches: ['r3'] },
  { name: '_ends_with % is literal', filter: { note: { _ends_with: '%c' } }, matches: ['r5'] },
  { name: '_nends_with', filter: { note: { _nends_with: 'o' } }, matches: ['r1', 'r2', 'r5'] },
]
