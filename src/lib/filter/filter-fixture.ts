import type { ColumnSpec } from './field-resolver.js'
import type { VariableContext } from './variables.js'

/** One row of the conformance table (filter-cases.ts): a filter and the ids it must match, in fixture order. */
export interface FilterCase {
  readonly name: string
  readonly filter: unknown
  /** Defaults to `filterContext`. */
  readonly context?: VariableContext
  readonly matches: readonly string[]
}

/** Column types of the fixture, for a runner that creates the table. Booleans are 0/1 in SQLite. */
export const filterColumns = {
  id: 'text',
  name: 'text',
  age: 'integer',
  score: 'real',
  active: 'boolean',
  owner: 'text',
  audience: 'text',
  project: 'text',
  status: 'text',
  note: 'text',
  tags: 'json',
  meta: 'json',
  created_at: 'integer',
  day: 'text',
} as const

/** The fixture's schema as the schema check sees it: the column kinds, `day` a date and `status` an enum. */
export const filterSchema: Readonly<Record<keyof typeof filterColumns, ColumnSpec>> = {
  id: 'text',
  name: 'text',
  age: 'integer',
  score: 'number',
  active: 'boolean',
  owner: 'text',
  audience: 'text',
  project: 'text',
  status: { type: 'text', values: { kind: 'string', choices: ['published', 'draft', 'archived'] } },
  note: 'text',
  tags: 'json',
  meta: 'json',
  created_at: 'integer',
  day: { type: 'text', values: { kind: 'string', format: 'date' } },
}

export const filterRecords: readonly Readonly<Record<keyof typeof filterColumns, unknown>>[] = [
  {
    id: 'r1',
    name: 'Alice',
    age: 30,
    score: 4.5,
    active: true,
    owner: 'u1',
    audience: 'editor',
    project: 'p1',
    status: 'published',
    note: 'hello world',
    tags: ['a', 'b'],
    meta: { size: 10, kind: 'image', dims: { w: 640 } },
    created_at: 1_699_990_000,
    day: '2023-11-14',
  },
  {
    id: 'r2',
    name: 'bob',
    age: 25,
    score: 3,
    active: false,
    owner: 'u2',
    audience: 'viewer',
    project: 'p2',
    status: 'draft',
    note: '',
    tags: [],
    meta: { size: 20, kind: 'doc' },
    created_at: 1_700_000_500,
    day: '2023-11-15',
  },
  {
    id: 'r3',
    name: 'Carol',
    age: null,
    score: null,
    active: null,
    owner: null,
    audience: null,
    project: 'p1',
    status: 'draft',
    note: null,
    tags: null,
    meta: null,
    created_at: 1_700_100_000,
    day: null,
  },
  {
    id: 'r4',
    name: "Dave O'Brien",
    age: 40,
    score: 5,
    active: true,
    owner: 'u1',
    audience: 'editor',
    project: 'p1',
    status: 'archived',
    note: 'Hello',
    tags: ['b', 'c'],
    meta: { size: 10, kind: null },
    created_at: 1_600_000_000,
    day: '2020-09-13',
  },
  {
    id: 'r5',
    name: '100%_real',
    age: 0,
    score: -1.5,
    active: false,
    owner: 'u3',
    audience: null,
    project: 'p1',
    status: 'published',
    note: 'a_b%c',
    tags: ['%'],
    meta: { kind: 'image' },
    created_at: 1_700_000_000,
    day: '2023-11-14',
  },
  {
    id: 'r6',
    name: '😀',
    age: 18,
    score: 0,
    active: true,
    owner: 'u2',
    audience: 'viewer',
    project: 'p1',
    status: 'published',
    note: 'hello',
    tags: ['a'],
    meta: { size: 5, dims: { w: 1920 } },
    created_at: 1_700_000_001,
    day: '2023-11-16',
  },
]

/** $NOW is 1_700_000_000, so $NOW_DATE is 2023-11-14 (UTC). */
export const filterContext: VariableContext = { userId: 'u1', role: 'editor', projectId: 'p1', now: 1_700_000_000 }
/** The fixture's context without a signed-in user. */
export const anonymousContext: VariableContext = { ...filterContext, userId: null }

/** Every fixture record's id, in fixture order. */
export const allIds = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']
