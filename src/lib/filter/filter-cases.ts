import type { ColumnSpec } from './field-resolver.js'
import type { VariableContext } from './variables.js'

/**
 * The shared conformance table of the filter language: filters (as values; runners also send each through
 * JSON.stringify), fixture records and the ids each filter must match, in fixture order. Every filter goes
 * through the schema check (`checkFilter` over `filterSchema`) as a request's does; then the in-memory
 * evaluator and the SQL compiler (against SQLite and PostgreSQL) run the same rows. Only filters whose
 * meaning is the same in memory and in SQL belong here: no type mismatches (the schema check refuses or
 * converts those first), no eq on JSON containers.
 */
export interface FilterCase {
  readonly name: string
  readonly filter: unknown
  /** Defaults to `filterContext`. */
  readonly context?: VariableContext
  readonly matches: readonly string[]
}

/** Column types of the fixture, for a runner that creates the table. Booleans are 0/1 in SQLite. */
export const filterColumns = {
  id: 'text', name: 'text', age: 'integer', score: 'real', active: 'boolean', owner: 'text',
  audience: 'text', project: 'text', status: 'text', note: 'text', tags: 'json', meta: 'json',
  created_at: 'integer', day: 'text',
} as const

/** The fixture's schema as the schema check sees it: the column kinds, `day` a date and `status` an enum. */
export const filterSchema: Readonly<Record<keyof typeof filterColumns, ColumnSpec>> = {
  id: 'text', name: 'text', age: 'integer', score: 'number', active: 'boolean', owner: 'text', audience: 'text', project: 'text',
  status: { type: 'text', values: { kind: 'string', choices: ['published', 'draft', 'archived'] } },
  note: 'text', tags: 'json', meta: 'json', created_at: 'integer',
  day: { type: 'text', values: { kind: 'string', format: 'date' } },
}

export const filterRecords: readonly Readonly<Record<keyof typeof filterColumns, unknown>>[] = [
  {
    id: 'r1', name: 'Alice', age: 30, score: 4.5, active: true, owner: 'u1', audience: 'editor', project: 'p1',
    status: 'published', note: 'hello world', tags: ['a', 'b'], meta: { size: 10, kind: 'image', dims: { w: 640 } },
    created_at: 1_699_990_000, day: '2023-11-14',
  },
  {
    id: 'r2', name: 'bob', age: 25, score: 3, active: false, owner: 'u2', audience: 'viewer', project: 'p2',
    status: 'draft', note: '', tags: [], meta: { size: 20, kind: 'doc' }, created_at: 1_700_000_500, day: '2023-11-15',
  },
  {
    id: 'r3', name: 'Carol', age: null, score: null, active: null, owner: null, audience: null, project: 'p1',
    status: 'draft', note: null, tags: null, meta: null, created_at: 1_700_100_000, day: null,
  },
  {
    id: 'r4', name: "Dave O'Brien", age: 40, score: 5, active: true, owner: 'u1', audience: 'editor', project: 'p1',
    status: 'archived', note: 'Hello', tags: ['b', 'c'], meta: { size: 10, kind: null }, created_at: 1_600_000_000,
    day: '2020-09-13',
  },
  {
    id: 'r5', name: '100%_real', age: 0, score: -1.5, active: false, owner: 'u3', audience: null, project: 'p1',
    status: 'published', note: 'a_b%c', tags: ['%'], meta: { kind: 'image' }, created_at: 1_700_000_000, day: '2023-11-14',
  },
  {
    id: 'r6', name: '😀', age: 18, score: 0, active: true, owner: 'u2', audience: 'viewer', project: 'p1',
    status: 'published', note: 'hello', tags: ['a'], meta: { size: 5, dims: { w: 1920 } }, created_at: 1_700_000_001,
    day: '2023-11-16',
  },
]

/** $NOW is 1_700_000_000, so $NOW_DATE is 2023-11-14 (UTC). */
export const filterContext: VariableContext = { userId: 'u1', role: 'editor', projectId: 'p1', now: 1_700_000_000 }
const anonymous: VariableContext = { ...filterContext, userId: null }

const all = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']

export const filterCases: readonly FilterCase[] = [
  // Empty filters
  { name: 'empty object matches all', filter: {}, matches: all },
  { name: 'empty array matches all', filter: [], matches: all },

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
  { name: 'SQL in a value is only a value (array)', filter: [{ field: 'name', op: 'eq', value: 'x" OR "1"="1' }], matches: [] },

  // neq
  { name: '_neq string', filter: { status: { _neq: 'draft' } }, matches: ['r1', 'r4', 'r5', 'r6'] },
  { name: 'neq string (array)', filter: [{ field: 'status', op: 'neq', value: 'draft' }], matches: ['r1', 'r4', 'r5', 'r6'] },
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
  { name: 'strings order by code point, not locale', filter: { name: { _gt: 'Bob' } }, matches: ['r2', 'r3', 'r4', 'r6'] },
  { name: 'astral characters order above the BMP', filter: { name: { _gt: '\uff5e' } }, matches: ['r6'] },

  // between (array format only)
  { name: 'between is inclusive', filter: [{ field: 'age', op: 'between', value: 18, valueTo: 30 }], matches: ['r1', 'r2', 'r6'] },
  {
    name: 'between strings',
    filter: [{ field: 'day', op: 'between', value: '2023-11-14', valueTo: '2023-11-15' }],
    matches: ['r1', 'r2', 'r5'],
  },
  { name: 'between reversed bounds matches nothing', filter: [{ field: 'age', op: 'between', value: 30, valueTo: 18 }], matches: [] },
  { name: 'between with a null bound matches nothing', filter: [{ field: 'age', op: 'between', value: null, valueTo: 30 }], matches: [] },

  // in, nin
  { name: '_in strings', filter: { status: { _in: ['draft', 'archived'] } }, matches: ['r2', 'r3', 'r4'] },
  { name: '_in numbers', filter: { age: { _in: [25, 40] } }, matches: ['r2', 'r4'] },
  { name: 'in comma-separated (array)', filter: [{ field: 'status', op: 'in', value: 'draft,archived' }], matches: ['r2', 'r3', 'r4'] },
  { name: 'in comma-separated, spaces trimmed (array)', filter: [{ field: 'status', op: 'in', value: 'draft , archived' }], matches: ['r2', 'r3', 'r4'] },
  { name: 'in array of numbers (array)', filter: [{ field: 'age', op: 'in', value: [25, 40] }], matches: ['r2', 'r4'] },
  { name: 'in one value (array)', filter: [{ field: 'status', op: 'in', value: 'archived' }], matches: ['r4'] },
  // A comma-separated list takes the kind of its field (the schema check converts each item).
  { name: 'in comma-separated integers (array)', filter: [{ field: 'age', op: 'in', value: '0,25' }], matches: ['r2', 'r5'] },
  { name: 'in comma-separated integers, spaces trimmed (array)', filter: [{ field: 'age', op: 'in', value: ' 40 , 18 ' }], matches: ['r4', 'r6'] },
  { name: 'in comma-separated numbers (array)', filter: [{ field: 'score', op: 'in', value: '4.5,-1.5' }], matches: ['r1', 'r5'] },
  { name: 'in comma-separated whole numbers on a real column (array)', filter: [{ field: 'score', op: 'in', value: '3,0' }], matches: ['r2', 'r6'] },
  { name: 'in comma-separated booleans (array)', filter: [{ field: 'active', op: 'in', value: 'false' }], matches: ['r2', 'r5'] },
  { name: 'in comma-separated dates stay text (array)', filter: [{ field: 'day', op: 'in', value: '2023-11-14,2020-09-13' }], matches: ['r1', 'r4', 'r5'] },
  { name: 'in comma-separated Unix seconds and $NOW (array)', filter: [{ field: 'created_at', op: 'in', value: '1600000000,$NOW' }], matches: ['r4', 'r5'] },
  { name: 'in comma-separated on a JSON path stays text (array)', filter: [{ field: 'meta.kind', op: 'in', value: 'doc,image' }], matches: ['r1', 'r2', 'r5'] },
  { name: '_in ignores a null in the list', filter: { owner: { _in: ['u3', null] } }, matches: ['r5'] },
  { name: '_nin strings', filter: { status: { _nin: ['draft'] } }, matches: ['r1', 'r4', 'r5', 'r6'] },
  { name: '_nin skips null fields', filter: { owner: { _nin: ['u1'] } }, matches: ['r2', 'r5', 'r6'] },
  { name: '_nin with a null in the list matches nothing', filter: { owner: { _nin: ['u1', null] } }, matches: [] },

  // contains, starts_with, ends_with and their negations
  { name: '_contains is case-sensitive', filter: { note: { _contains: 'hello' } }, matches: ['r1', 'r6'] },
  { name: 'contains (array)', filter: [{ field: 'name', op: 'contains', value: 'o' }], matches: ['r2', 'r3'] },
  { name: '_contains a quote', filter: { name: { _contains: "'" } }, matches: ['r4'] },
  { name: '_contains % is literal', filter: { name: { _contains: '%' } }, matches: ['r5'] },
  { name: '_contains _ is literal', filter: { name: { _contains: '_' } }, matches: ['r5'] },
  { name: '_contains a%c is not a LIKE pattern', filter: { note: { _contains: 'a%c' } }, matches: [] },
  { name: '_contains _b% is literal', filter: { note: { _contains: '_b%' } }, matches: ['r5'] },
  { name: '_contains empty string matches every string', filter: { note: { _contains: '' } }, matches: ['r1', 'r2', 'r4', 'r5', 'r6'] },
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

  // Presence
  { name: '_null', filter: { age: { _null: true } }, matches: ['r3'] },
  { name: '_nnull', filter: { age: { _nnull: true } }, matches: ['r1', 'r2', 'r4', 'r5', 'r6'] },
  { name: 'empty: null or empty string (array)', filter: [{ field: 'note', op: 'empty' }], matches: ['r2', 'r3'] },
  { name: 'empty with a blank value (array)', filter: [{ field: 'note', op: 'empty', value: '' }], matches: ['r2', 'r3'] },
  { name: 'not_empty (array)', filter: [{ field: 'note', op: 'not_empty' }], matches: ['r1', 'r4', 'r5', 'r6'] },
  { name: 'not_empty with a null value (array)', filter: [{ field: 'note', op: 'not_empty', value: null }], matches: ['r1', 'r4', 'r5', 'r6'] },

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
    filter: [{ field: 'status', op: 'eq', value: 'published' }, { field: 'age', op: 'gt', value: 10 }],
    matches: ['r1', 'r6'],
  },
  {
    name: 'eight levels of nesting',
    filter: { _and: [{ _or: [{ _and: [{ _or: [{ _and: [{ _or: [{ _and: [{ _or: [{ age: 40 }] }] }] }] }] }] }] }] },
    matches: ['r4'],
  },

  // Dotted paths into JSON
  { name: 'dotted path shorthand', filter: { 'meta.size': 10 }, matches: ['r1', 'r4'] },
  { name: 'dotted path _gt', filter: { 'meta.size': { _gt: 10 } }, matches: ['r2'] },
  { name: 'dotted path lte (array)', filter: [{ field: 'meta.size', op: 'lte', value: 10 }], matches: ['r1', 'r4', 'r6'] },
  { name: 'dotted path string', filter: { 'meta.kind': 'image' }, matches: ['r1', 'r5'] },
  { name: 'dotted path two levels', filter: { 'meta.dims.w': { _gte: 1000 } }, matches: ['r6'] },
  { name: 'dotted path: JSON null, missing key and null column are null', filter: { 'meta.kind': { _null: true } }, matches: ['r3', 'r4', 'r6'] },
  { name: 'dotted path _nnull', filter: { 'meta.size': { _nnull: true } }, matches: ['r1', 'r2', 'r4', 'r6'] },
  { name: 'dotted path through a missing object', filter: { 'meta.missing.deep': { _null: true } }, matches: all },
  { name: 'dotted path _in', filter: { 'meta.kind': { _in: ['doc', 'image'] } }, matches: ['r1', 'r2', 'r5'] },

  // Variables
  { name: '$CURRENT_USER shorthand', filter: { owner: '$CURRENT_USER' }, matches: ['r1', 'r4'] },
  { name: '$CURRENT_USER (array)', filter: [{ field: 'owner', op: 'eq', value: '$CURRENT_USER' }], matches: ['r1', 'r4'] },
  { name: '$CURRENT_USER _neq', filter: { owner: { _neq: '$CURRENT_USER' } }, matches: ['r2', 'r5', 'r6'] },
  { name: '$CURRENT_ROLE', filter: { audience: { _eq: '$CURRENT_ROLE' } }, matches: ['r1', 'r4'] },
  { name: '$PROJECT_ID', filter: { project: '$PROJECT_ID' }, matches: ['r1', 'r3', 'r4', 'r5', 'r6'] },
  { name: '$NOW _lt', filter: { created_at: { _lt: '$NOW' } }, matches: ['r1', 'r4'] },
  { name: '$NOW lte (array)', filter: [{ field: 'created_at', op: 'lte', value: '$NOW' }], matches: ['r1', 'r4', 'r5'] },
  { name: '$NOW_DATE', filter: { day: '$NOW_DATE' }, matches: ['r1', 'r5'] },
  { name: 'variable in an _in list', filter: { owner: { _in: ['$CURRENT_USER', 'u3'] } }, matches: ['r1', 'r4', 'r5'] },
  { name: 'variable in a comma-separated list (array)', filter: [{ field: 'owner', op: 'in', value: 'u3,$CURRENT_USER' }], matches: ['r1', 'r4', 'r5'] },
  {
    name: 'variable as a between bound (array)',
    filter: [{ field: 'created_at', op: 'between', value: 1_699_000_000, valueTo: '$NOW' }],
    matches: ['r1', 'r5'],
  },
  { name: 'a later $NOW', filter: { created_at: { _gte: '$NOW' } }, context: { ...filterContext, now: 1_700_000_500 }, matches: ['r2', 'r3'] },
  { name: 'anonymous: $CURRENT_USER matches nothing', filter: { owner: '$CURRENT_USER' }, context: anonymous, matches: [] },
  { name: 'anonymous: _neq $CURRENT_USER matches nothing', filter: { owner: { _neq: '$CURRENT_USER' } }, context: anonymous, matches: [] },
  { name: 'anonymous: _nin [$CURRENT_USER] matches nothing', filter: { owner: { _nin: ['$CURRENT_USER'] } }, context: anonymous, matches: [] },
  {
    name: 'anonymous: grant scope OR public rows',
    filter: { _or: [{ owner: { _eq: '$CURRENT_USER' } }, { status: 'published' }] },
    context: anonymous,
    matches: ['r1', 'r5', 'r6'],
  },
  { name: 'a lower-case $name is a literal', filter: { owner: '$current_user' }, matches: [] },
]
