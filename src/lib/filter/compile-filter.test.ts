import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely'
import { describe, expect, it } from 'vitest'
import type { DbKind } from '../db/index.js'
import { AppError } from '../errors.js'
import {
  compareBetween,
  compareList,
  compareValue,
  literal,
  matchNone,
  orNode,
  variable,
  type ResolvedFilterNode,
} from './ast.js'
import { compileFilter } from './compile-filter.js'
import { createSchemaResolver, type FieldResolver, type ResolvedField } from './field-resolver.js'
import { filterContext } from './filter-cases.js'
import { hostileFilters } from './hostile-filters.js'
import { parseFilter } from './parse.js'
import { resolveVariables } from './variables.js'

// The SQL and parameters the compiler emits per dialect, without a database (the conformance runner in
// compile-filter.db.test.ts proves what they mean), and the inputs it must refuse before emitting any.

const kinds: DbKind[] = ['sqlite', 'postgres']
const cold: Record<DbKind, Kysely<any>> = {
  sqlite: new Kysely<any>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
  postgres: new Kysely<any>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
}

const resolver = createSchemaResolver({
  id: 'text',
  name: 'text',
  note: 'text',
  age: 'integer',
  score: 'number',
  active: 'boolean',
  tags: 'json',
  meta: 'json',
  value: 'json',
})

const render = (kind: DbKind, node: ResolvedFilterNode, using: FieldResolver = resolver) => {
  const query = cold[kind]
    .selectFrom('t')
    .select('id')
    .where(compileFilter(node, using, kind))
    .compile()
  return [query.sql.replace('select "id" from "t" where ', ''), query.parameters] as const
}
const resolve = (filter: unknown) => resolveVariables(parseFilter(filter), filterContext)

const codeOf = (fn: () => unknown): string => {
  try {
    fn()
  } catch (err) {
    return err instanceof AppError ? err.code : `not an AppError: ${String(err)}`
  }
  return 'no error'
}

type Emitted = readonly [string, readonly unknown[]]
const rows: { name: string; filter: unknown; sqlite: Emitted; postgres: Emitted }[] = [
  { name: 'the empty filter', filter: {}, sqlite: ['true', []], postgres: ['true', []] },
  {
    name: 'eq on a text column',
    filter: { name: 'Alice' },
    sqlite: ['"name" = ?', ['Alice']],
    postgres: ['"name" = cast($1 as text)', ['Alice']],
  },
  {
    name: 'integral and fractional numbers',
    filter: { age: { _gte: 18, _lt: 30.5 } },
    sqlite: ['("age" >= ? and "age" < ?)', [18, 30.5]],
    postgres: ['("age" >= cast($1 as bigint) and "age" < cast($2 as double precision))', [18, 30.5]],
  },
  {
    name: 'booleans are 0/1 on SQLite',
    filter: { active: false },
    sqlite: ['"active" = ?', [0]],
    postgres: ['"active" = cast($1 as boolean)', [false]],
  },
  {
    name: 'a value of another type than the column folds away',
    filter: { _or: [{ age: 'x' }, { age: { _neq: 'x' } }] },
    sqlite: ['"age" is not null', []],
    postgres: ['"age" is not null', []],
  },
  {
    name: 'strings order by code point',
    filter: { name: { _gt: 'Bob' } },
    sqlite: ['"name" collate binary > ?', ['Bob']],
    postgres: ['"name" collate "C" > cast($1 as text)', ['Bob']],
  },
  {
    name: 'nin, and a null in the list',
    filter: { _or: [{ name: { _nin: ['a', 'b'] } }, { age: { _nin: [1, null] } }] },
    sqlite: ['not ("name" in (?, ?))', ['a', 'b']],
    postgres: ['not ("name" in (cast($1 as text), cast($2 as text)))', ['a', 'b']],
  },
  {
    name: 'contains is literal',
    filter: { note: { _contains: 'a%_c' } },
    sqlite: ['instr("note", ?) > 0', ['a%_c']],
    postgres: ['strpos("note", $1) > 0', ['a%_c']],
  },
  {
    name: 'starts_with and nstarts_with',
    filter: { name: { _starts_with: 'A', _nstarts_with: 'B' } },
    sqlite: ['(instr("name", ?) = 1 and instr("name", ?) <> 1)', ['A', 'B']],
    postgres: ['(starts_with("name", $1) and not starts_with("name", $2))', ['A', 'B']],
  },
  {
    name: 'ends_with and nends_with',
    filter: { name: { _ends_with: 'e', _nends_with: 'f' } },
    sqlite: [
      '(substr(cast("name" as blob), -length(cast(? as blob))) = cast(? as blob) and ("name" = \'\' or substr(cast("name" as blob), -length(cast(? as blob))) <> cast(? as blob)))',
      ['e', 'e', 'f', 'f'],
    ],
    postgres: [
      '(right("name", char_length(cast($1 as text))) = $2 and right("name", char_length(cast($3 as text))) <> $4)',
      ['e', 'e', 'f', 'f'],
    ],
  },
  {
    name: 'the empty string is contained in every string',
    filter: { _and: [{ note: { _contains: '' } }, { note: { _nstarts_with: '' } }] },
    sqlite: ['false', []],
    postgres: ['false', []],
  },
  {
    name: 'empty and not_empty',
    filter: [
      { field: 'note', op: 'empty' },
      { field: 'age', op: 'not_empty' },
    ],
    sqlite: ['(("note" is null or "note" = \'\') and "age" is not null)', []],
    postgres: ['(("note" is null or "note" = \'\') and "age" is not null)', []],
  },
  {
    name: 'a number inside JSON',
    filter: { 'meta.size': { _gt: 10 } },
    sqlite: [
      '(json_type("meta", ?) in (\'integer\', \'real\') and json_extract("meta", ?) > ?)',
      ['$."size"', '$."size"', 10],
    ],
    postgres: [
      '(jsonb_typeof(("meta" #> cast($1 as text[]))) = \'number\' and ("meta" #> cast($2 as text[])) > to_jsonb(cast($3 as double precision)))',
      [['size'], ['size'], 10],
    ],
  },
  {
    name: 'a string two levels inside JSON',
    filter: { 'meta.dims.unit': 'px' },
    sqlite: [
      '(json_type("meta", ?) = \'text\' and json_extract("meta", ?) = ?)',
      ['$."dims"."unit"', '$."dims"."unit"', 'px'],
    ],
    postgres: [
      '(jsonb_typeof(("meta" #> cast($1 as text[]))) = \'string\' and ("meta" #>> cast($2 as text[])) = $3)',
      [['dims', 'unit'], ['dims', 'unit'], 'px'],
    ],
  },
  {
    name: 'neq inside JSON needs a scalar',
    filter: { 'meta.kind': { _neq: true } },
    sqlite: [
      "(json_type(\"meta\", ?) in ('text', 'integer', 'real', 'true', 'false') and not (json_type(\"meta\", ?) in ('true', 'false') and json_extract(\"meta\", ?) = ?))",
      ['$."kind"', '$."kind"', '$."kind"', 1],
    ],
    postgres: [
      "(jsonb_typeof((\"meta\" #> cast($1 as text[]))) in ('string', 'number', 'boolean') and not (jsonb_typeof((\"meta\" #> cast($2 as text[]))) = 'boolean' and (\"meta\" #> cast($3 as text[])) = to_jsonb(cast($4 as boolean))))",
      [['kind'], ['kind'], ['kind'], true],
    ],
  },
  {
    name: 'null inside JSON',
    filter: { 'meta.kind': { _null: true } },
    sqlite: ["coalesce(json_type(\"meta\", ?), 'null') = 'null'", ['$."kind"']],
    postgres: ["coalesce(jsonb_typeof((\"meta\" #> cast($1 as text[]))), 'null') = 'null'", [['kind']]],
  },
  {
    name: 'contains on a JSON column: substring or membership',
    filter: { value: { _contains: 'b' } },
    sqlite: [
      '((json_type("value", ?) = \'text\' and instr(json_extract("value", ?), ?) > 0) or (json_type("value", ?) = \'array\' and exists (select 1 from (select "value" as plinth_json) as plinth_src, json_each(plinth_src.plinth_json, ?) as plinth_item where plinth_item.type = \'text\' and plinth_item.atom = ?)))',
      ['$', '$', 'b', '$', '$', 'b'],
    ],
    postgres: [
      '((jsonb_typeof("value") = \'string\' and strpos(("value" #>> cast($1 as text[])), $2) > 0) or (jsonb_typeof("value") = \'array\' and "value" @> jsonb_build_array(cast($3 as text))))',
      [[], 'b', 'b'],
    ],
  },
  {
    name: 'membership of a number',
    filter: { tags: { _ncontains: 2 } },
    sqlite: [
      "(json_type(\"tags\", ?) = 'array' and not (exists (select 1 from (select \"tags\" as plinth_json) as plinth_src, json_each(plinth_src.plinth_json, ?) as plinth_item where plinth_item.type in ('integer', 'real') and plinth_item.atom = ?)))",
      ['$', '$', 2],
    ],
    postgres: [
      '(jsonb_typeof("tags") = \'array\' and not ("tags" @> jsonb_build_array(cast($1 as double precision))))',
      [2],
    ],
  },
  {
    name: 'between',
    filter: [{ field: 'score', op: 'between', value: -1.5, valueTo: 3 }],
    sqlite: ['("score" >= ? and "score" <= ?)', [-1.5, 3]],
    postgres: ['("score" >= cast($1 as double precision) and "score" <= cast($2 as bigint))', [-1.5, 3]],
  },
]

describe.each(kinds)('compileFilter emits for %s', (kind) => {
  it.each(rows)('$name', (row) => {
    const [sql, parameters] = render(kind, resolve(row.filter))
    expect([sql, parameters]).toEqual(row[kind])
  })

  it('binds a string with NUL on SQLite, and compares the part before it on PostgreSQL (which cannot store NUL)', () => {
    const [sql, parameters] = render(
      kind,
      resolve({ _or: [{ name: { _gte: 'a\u0000b' } }, { name: 'x\u0000' }, { note: { _in: ['y', 'z\u0000'] } }] }),
    )
    expect([sql, parameters]).toEqual(
      kind === 'sqlite'
        ? ['("name" collate binary >= ? or "name" = ? or "note" in (?, ?))', ['a\u0000b', 'x\u0000', 'y', 'z\u0000']]
        : ['("name" collate "C" > cast($1 as text) or "note" = cast($2 as text))', ['a', 'y']],
    )
  })
})

describe.each(kinds)('compileFilter refuses on %s', (kind) => {
  it.each(hostileFilters)('hostile input: $name', ({ input }) => {
    let compiled = false
    const watching: FieldResolver = {
      resolve: (path) => {
        compiled = true
        return resolver.resolve(path)
      },
    }
    expect(codeOf(() => compileFilter(resolve(input), watching, kind))).toBe('invalid_request')
    expect(compiled).toBe(false)
  })

  // Trees built by hand skip the parser; the resolver and the compiler still refuse them.
  const eq = (field: [string, ...string[]]) => compareValue(field, 'eq', literal(1))
  it.each([
    { name: 'a statement as a field', node: eq(['name; drop table t']) },
    { name: 'an unknown column', node: eq(['password']) },
    { name: 'an inherited name', node: eq(['toString']) },
    { name: 'a path into a text column', node: eq(['name', 'length']) },
    { name: 'a quote in a JSON key', node: eq(['meta', 'a"] or 1=1 --']) },
    { name: 'JSON path syntax in a key', node: eq(['meta', '$']) },
    { name: '__proto__ in a JSON path', node: eq(['meta', '__proto__']) },
    { name: 'a lone high surrogate', node: compareValue(['name'], 'eq', literal('\ud83d')) },
    { name: 'a lone low surrogate in a list', node: compareList(['name'], 'in', [literal('a'), literal('\ude00x')]) },
    { name: 'surrogates in the wrong order', node: compareValue(['name'], 'gt', literal('\ude00\ud83d')) },
    { name: 'an infinite number', node: compareValue(['age'], 'lt', literal(Number.POSITIVE_INFINITY)) },
    { name: 'NaN as a bound', node: compareBetween(['age'], literal(1), literal(Number.NaN)) },
  ])('$name with invalid_request', ({ node }) => {
    expect(codeOf(() => compileFilter(node, resolver, kind))).toBe('invalid_request')
  })

  const rogue = (field: Partial<ResolvedField> & Record<string, unknown>): FieldResolver => ({
    resolve: () => ({ column: 'meta', jsonPath: [], type: 'json', ...field }) as ResolvedField,
  })
  it.each([
    {
      name: 'a JSON path that breaks out of its quotes',
      using: rogue({ jsonPath: ['x") or 1=1 --'] }),
      code: 'invalid_request',
    },
    { name: 'a JSON path into a text column', using: rogue({ type: 'text', jsonPath: ['x'] }), code: 'internal' },
    { name: 'an unknown column kind', using: rogue({ type: 'sql' as never }), code: 'internal' },
    { name: 'an empty column name', using: rogue({ column: '' }), code: 'internal' },
  ])('a resolver returning $name ($code)', ({ using, code }) => {
    expect(codeOf(() => compileFilter(eq(['meta']), using, kind))).toBe(code)
  })

  it('quotes whatever column a resolver returns as one identifier', () => {
    const [sql] = render(kind, eq(['x']), rogue({ column: 'name" or 1=1 --', type: 'integer' }))
    expect(sql.startsWith('"name"" or 1=1 --" = ')).toBe(true)
  })

  it('refuses a tree whose variables are not resolved (internal)', () => {
    const node = compareValue(['name'], 'eq', variable('$CURRENT_USER')) as unknown as ResolvedFilterNode
    expect(codeOf(() => compileFilter(node, resolver, kind))).toBe('internal')
  })

  it('refuses a malformed tree (internal)', () => {
    const bad = [
      { kind: 'not', items: [] },
      { kind: 'compare', field: ['name'], op: 'like', value: literal('x') },
    ]
    for (const node of bad)
      expect(codeOf(() => compileFilter(node as unknown as ResolvedFilterNode, resolver, kind))).toBe('internal')
  })
})

describe('compileFilter', () => {
  it.each(kinds)('compiles the filter that matches nothing to false on %s, folded into what surrounds it', (kind) => {
    expect(render(kind, matchNone())).toEqual(['false', []])
    expect(render(kind, orNode([matchNone(), compareValue(['age'], 'eq', literal(1))]))[0]).not.toContain('false')
  })

  it('refuses an unknown dialect (internal)', () => {
    expect(codeOf(() => compileFilter(resolve({}), resolver, 'mysql' as DbKind))).toBe('internal')
  })

  // Hostile values never reach the SQL text: each is one bound parameter, whatever the operator.
  const hostileValues = [
    "'",
    "' OR '1'='1",
    "'; drop table t; --",
    '"',
    '`',
    '\\',
    "\\'",
    '%',
    '_',
    '*',
    '[a]',
    '/*',
    '--',
    '$1',
    '?',
    ':name',
    "') or ('1'='1",
    '$."size"',
    '{"a":1}',
    '\u202e',
    'e\u0301',
    '\u{1f600}',
    'x'.repeat(4096),
  ]
  it.each(kinds)('binds hostile values as parameters on %s', (kind) => {
    for (const value of hostileValues) {
      for (const filter of [
        { name: value },
        { name: { _gt: value } },
        { note: { _contains: value } },
        { note: { _nends_with: value } },
        { 'meta.kind': { _in: [value, 'x'] } },
        { tags: { _contains: value } },
      ]) {
        const [sql, parameters] = render(kind, resolve(filter))
        if (value.length > 2) expect(sql).not.toContain(value)
        expect(sql).not.toMatch(/;|--|\/\*/)
        expect(parameters).toContain(value)
      }
    }
  })
})
