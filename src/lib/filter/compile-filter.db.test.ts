import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import type { DbKind } from '../db/index.js'
import {
  compareBetween,
  compareList,
  comparePresence,
  compareValue,
  literal,
  valueOps,
  type FieldPath,
  type ResolvedFilterNode,
  type Scalar,
} from './ast.js'
import { checkFilter } from './check-filter.js'
import { compileFilter } from './compile-filter.js'
import { evaluateFilter } from './evaluate.js'
import { createSchemaResolver, type ColumnKind } from './field-resolver.js'
import { filterCases, filterColumns, filterContext, filterRecords, filterSchema } from './filter-cases.js'
import { parseFilter } from './parse.js'
import { resolveVariables } from './variables.js'

// The conformance runner: every filter runs as SQL against a real table and in memory against the same
// records, and both must give the same ids (and the ids the table expects).

type Row = Readonly<Record<string, unknown>>

const columnKind: Record<(typeof filterColumns)[keyof typeof filterColumns], ColumnKind> = {
  text: 'text',
  integer: 'integer',
  real: 'number',
  boolean: 'boolean',
  json: 'json',
}
const sqlTypes: Record<DbKind, Record<ColumnKind, string>> = {
  sqlite: { text: 'text', integer: 'integer', number: 'real', boolean: 'boolean', json: 'text' },
  postgres: { text: 'text', integer: 'bigint', number: 'double precision', boolean: 'boolean', json: 'jsonb' },
}
const recordKinds = Object.fromEntries(Object.entries(filterColumns).map(([name, type]) => [name, columnKind[type]]))

// Values a fixture table leaves out: booleans and mixed types inside JSON, top-level JSON scalars, nesting,
// and (SQLite only, as PostgreSQL cannot store it) NUL inside stored text.
const jsonKinds: Record<string, ColumnKind> = { id: 'text', doc: 'json', txt: 'text' }
const jsonRecords: readonly Row[] = [
  { id: 'j1', doc: { flag: true, n: 1, s: '1', list: [1, '1', true, null, ['x'], { a: 'x' }] }, txt: 'x' },
  { id: 'j2', doc: { flag: false, n: 1.5, s: 'x', list: ['x', 'y'], e: '' }, txt: '' },
  { id: 'j3', doc: { flag: 'true', n: '1', s: 1, list: [[1]], e: null }, txt: null },
  { id: 'j4', doc: null, txt: 'a_b%c' },
  { id: 'j5', doc: 'plain string', txt: 'plain string' },
  { id: 'j6', doc: { flag: null, list: [], n: -0.5, e: 0 }, txt: '\u{1f600}' },
  { id: 'j7', doc: 5, txt: '\uff5e' },
  { id: 'j8', doc: true, txt: '\ue000' },
  { id: 'j9', doc: [true, 2, 'x', false], txt: 'Bob' },
  { id: 'j10', doc: '', txt: 'bob' },
  { id: 'j11', doc: { n: 1e21, s: '\u00e9', list: [1.0, 'X'] }, txt: 'e\u0301' },
  { id: 'j12', doc: [], txt: 'xx' },
]
const sqliteOnlyRecords: readonly Row[] = [
  { id: 'j13', doc: { s: 'x\u0000', list: ['x\u0000', 'a'] }, txt: 'x\u0000' },
  { id: 'j14', doc: 'a\u0000b', txt: 'Bob\u0000x' },
  { id: 'j15', doc: '\u0000', txt: '\u0000' },
]

const tables = {
  filter_records: { kinds: recordKinds, records: () => filterRecords as readonly Row[] },
  filter_json: {
    kinds: jsonKinds,
    records: (kind: DbKind) => (kind === 'sqlite' ? [...jsonRecords, ...sqliteOnlyRecords] : jsonRecords),
  },
} as const
type TableName = keyof typeof tables

async function createTable(db: Kysely<any>, kind: DbKind, name: TableName): Promise<void> {
  const { kinds, records } = tables[name]
  let create = db.schema.createTable(name)
  for (const [column, type] of Object.entries(kinds)) {
    create = create.addColumn(column, sql.raw(sqlTypes[kind][type]), (c) => (column === 'id' ? c.primaryKey() : c))
  }
  await create.execute()
  const rows = records(kind).map((record) =>
    Object.fromEntries(
      Object.entries(kinds).map(([column, type]) => {
        const value = record[column] ?? null
        return [column, type === 'json' && value !== null ? JSON.stringify(value) : value]
      }),
    ),
  )
  await db.insertInto(name).values(rows).execute()
}

describe.each(dialects())('compileFilter on %s', (kind) => {
  let f: DialectFixture
  const resolvers = {
    filter_records: createSchemaResolver(recordKinds),
    filter_json: createSchemaResolver(jsonKinds),
  }

  const idsInOrder = (name: TableName, ids: readonly string[]): string[] =>
    tables[name]
      .records(kind)
      .map((r) => String(r.id))
      .filter((id) => ids.includes(id))
  const evaluated = (name: TableName, node: ResolvedFilterNode): string[] =>
    tables[name]
      .records(kind)
      .filter((record) => evaluateFilter(node, record))
      .map((record) => String(record.id))

  const select = async (name: TableName, node: ResolvedFilterNode): Promise<string[]> => {
    const rows = await f.db
      .selectFrom(name)
      .select('id')
      .where(compileFilter(node, resolvers[name], kind))
      .execute()
    return idsInOrder(
      name,
      rows.map((row: { id: string }) => row.id),
    )
  }
  const run = (filter: unknown, context = filterContext) =>
    select('filter_records', resolveVariables(parseFilter(filter), context))

  beforeAll(async () => {
    f = await openFixture(kind)
    await createTable(f.db, kind, 'filter_records')
    await createTable(f.db, kind, 'filter_json')
  })
  afterAll(async () => {
    await f?.close()
  })

  describe('the shared filter cases', () => {
    const schema = createSchemaResolver(filterSchema)
    it.each(filterCases)('$name', async ({ filter, context, matches }) => {
      const node = resolveVariables(checkFilter(parseFilter(filter), schema), context ?? filterContext)
      const ids = await select('filter_records', node)
      expect(ids).toEqual(matches)
      expect(ids).toEqual(evaluated('filter_records', node))
    })
  })

  // Filters the shared table leaves out because the schema check refuses them (or converts their values);
  // unchecked, the SQL must still answer as the evaluator does.
  describe('values of other types and shapes', () => {
    const rows: { name: string; filter: unknown; matches: string[] }[] = [
      { name: 'a number never equals a text column', filter: { name: { _eq: 5 } }, matches: [] },
      { name: 'a string never equals a number column', filter: { age: '25' }, matches: [] },
      {
        name: 'neq across types holds on every non-null',
        filter: { age: { _neq: '25' } },
        matches: ['r1', 'r2', 'r4', 'r5', 'r6'],
      },
      { name: 'gt across types is false', filter: { age: { _gt: '0' } }, matches: [] },
      { name: 'a boolean column never equals 1', filter: { active: 1 }, matches: [] },
      { name: 'a number column never equals true', filter: { age: { _eq: true } }, matches: [] },
      { name: 'booleans order false < true', filter: { active: { _gt: false } }, matches: ['r1', 'r4', 'r6'] },
      { name: 'boolean neq', filter: { active: { _neq: true } }, matches: ['r2', 'r5'] },
      { name: 'boolean nin', filter: { active: { _nin: [false] } }, matches: ['r1', 'r4', 'r6'] },
      { name: 'in across types', filter: { age: { _in: ['25', 40] } }, matches: ['r4'] },
      { name: 'nin across types', filter: { age: { _nin: ['25'] } }, matches: ['r1', 'r2', 'r4', 'r5', 'r6'] },
      {
        name: 'between across types',
        filter: [{ field: 'age', op: 'between', value: 'a', valueTo: 'z' }],
        matches: [],
      },
      { name: 'contains a number in a string', filter: { note: { _contains: 1 } }, matches: [] },
      { name: 'ncontains a number in a string', filter: { note: { _ncontains: 1 } }, matches: [] },
      { name: 'starts_with on a number column', filter: { age: { _starts_with: '2' } }, matches: [] },
      { name: 'nstarts_with on a number column', filter: { age: { _nstarts_with: '2' } }, matches: [] },
      { name: 'a JSON number never equals a string', filter: { 'meta.size': '10' }, matches: [] },
      { name: 'neq on JSON across types', filter: { 'meta.size': { _neq: '10' } }, matches: ['r1', 'r2', 'r4', 'r6'] },
      { name: 'gt on a JSON string with a number', filter: { 'meta.kind': { _gt: 5 } }, matches: [] },
      { name: 'neq on JSON skips JSON null', filter: { 'meta.kind': { _neq: 5 } }, matches: ['r1', 'r2', 'r5'] },
      { name: 'eq on a JSON array', filter: { tags: 'a' }, matches: [] },
      { name: 'neq on a JSON array is false', filter: { tags: { _neq: 'a' } }, matches: [] },
      { name: 'neq on a JSON object is false', filter: { meta: { _neq: 'x' } }, matches: [] },
      { name: 'nin on a JSON object is false', filter: { 'meta.dims': { _nin: ['x'] } }, matches: [] },
      { name: 'gt on a JSON object is false', filter: { 'meta.dims': { _gt: 0 } }, matches: [] },
      { name: 'array membership does not coerce', filter: { tags: { _contains: 1 } }, matches: [] },
      {
        name: 'ncontains a number on arrays',
        filter: { tags: { _ncontains: 1 } },
        matches: ['r1', 'r2', 'r4', 'r5', 'r6'],
      },
      { name: 'contains does not search objects', filter: { meta: { _contains: 'image' } }, matches: [] },
      { name: 'ncontains on an object is false', filter: { meta: { _ncontains: 'x' } }, matches: [] },
      { name: 'starts_with on a JSON array', filter: { tags: { _starts_with: 'a' } }, matches: [] },
      { name: 'an empty array is not empty', filter: [{ field: 'tags', op: 'empty' }], matches: ['r3'] },
      {
        name: 'not_empty on JSON',
        filter: [{ field: 'tags', op: 'not_empty' }],
        matches: ['r1', 'r2', 'r4', 'r5', 'r6'],
      },
      { name: 'contains in a JSON string', filter: { 'meta.kind': { _contains: 'mag' } }, matches: ['r1', 'r5'] },
      { name: 'starts_with in a JSON string', filter: { 'meta.kind': { _starts_with: 'im' } }, matches: ['r1', 'r5'] },
      { name: 'ends_with in a JSON string', filter: { 'meta.kind': { _ends_with: 'oc' } }, matches: ['r2'] },
      { name: 'nends_with in a JSON string', filter: { 'meta.kind': { _nends_with: 'oc' } }, matches: ['r1', 'r5'] },
      { name: 'JSON strings order by code point', filter: { 'meta.kind': { _lt: 'e' } }, matches: ['r2'] },
      {
        name: 'between on JSON numbers',
        filter: [{ field: 'meta.size', op: 'between', value: 5, valueTo: 10 }],
        matches: ['r1', 'r4', 'r6'],
      },
      { name: 'nin on JSON numbers', filter: { 'meta.size': { _nin: [10] } }, matches: ['r2', 'r6'] },
      { name: 'nin on JSON with a null in the list', filter: { 'meta.size': { _nin: [10, null] } }, matches: [] },
      { name: 'neq two levels down', filter: { 'meta.dims.w': { _neq: 640 } }, matches: ['r6'] },
      {
        name: 'a path does not walk into arrays',
        filter: { 'tags.a': { _null: true } },
        matches: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'],
      },
      { name: 'a real equals an integral value', filter: { score: { _eq: 3 } }, matches: ['r2'] },
      { name: 'in over integral and fractional values', filter: { score: { _in: [0, -1.5] } }, matches: ['r5', 'r6'] },
      { name: 'a fraction against an integer column', filter: { age: { _gt: 24.5 } }, matches: ['r1', 'r2', 'r4'] },
      { name: 'a fraction below an integer column', filter: { age: { _lt: 0.5 } }, matches: ['r5'] },
      {
        name: 'a number beyond bigint',
        filter: { created_at: { _lt: 1e20 } },
        matches: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'],
      },
      { name: 'negative zero', filter: { age: -0 }, matches: ['r5'] },
      {
        name: 'not_empty on a number column',
        filter: [{ field: 'age', op: 'not_empty' }],
        matches: ['r1', 'r2', 'r4', 'r5', 'r6'],
      },
      { name: 'empty on a boolean column', filter: [{ field: 'active', op: 'empty' }], matches: ['r3'] },
    ]
    it.each(rows)('$name', async ({ filter, matches }) => {
      const node = resolveVariables(parseFilter(filter), filterContext)
      const ids = await select('filter_records', node)
      expect(ids).toEqual(matches)
      expect(ids).toEqual(evaluated('filter_records', node))
    })
  })

  // A grid of fields × operators × values, each checked against the evaluator: the proof that SQL and
  // memory agree beyond the hand-picked rows. Filters run a hundred to a query, as selected columns.
  describe('every operator on every field agrees with the evaluator', () => {
    const values: Scalar[] = [
      null,
      0,
      1,
      1.5,
      10,
      25,
      -0.5,
      1e21,
      true,
      false,
      '',
      '1',
      'a',
      'x',
      'X',
      'b',
      'draft',
      'hello',
      'Hello',
      'plain string',
      '%',
      '_',
      'a_b%c',
      '2023-11-14',
      'Bob',
      'bob',
      '\u00e9',
      'e\u0301',
      '\u{1f600}',
      '\uff5e',
      '\ue000',
      'x\u0000',
      'Bob\u0000x',
      '\u0000',
      "O'Brien",
      'true',
      'null',
      '["a"]',
      0.30000000000000004,
      -1.5,
    ]
    const grid = (fields: FieldPath[]): ResolvedFilterNode[] =>
      fields.flatMap((field) => [
        ...(['is_null', 'not_null', 'empty', 'not_empty'] as const).map((op) => comparePresence(field, op)),
        ...values.flatMap((value) => [
          ...valueOps.map((op) => compareValue(field, op, literal(value))),
          compareList(field, 'in', [literal(value)]),
          compareList(field, 'nin', [literal(value), literal('b')]),
          compareList(field, 'in', [literal(value), literal(1), literal(true)]),
          compareBetween(field, literal(value), literal('z')),
          compareBetween(field, literal(0), literal(value)),
        ]),
      ])

    const check = async (name: TableName, nodes: ResolvedFilterNode[]): Promise<void> => {
      const mismatches: string[] = []
      for (let start = 0; start < nodes.length; start += 100) {
        const batch = nodes.slice(start, start + 100)
        const rows = await f.db
          .selectFrom(name)
          .select('id')
          .select(
            batch.map((node, i) =>
              sql<number>`case when ${compileFilter(node, resolvers[name], kind)} then 1 else 0 end`.as(`c${i}`),
            ),
          )
          .execute()
        batch.forEach((node, i) => {
          const ids = idsInOrder(
            name,
            rows.filter((row: Row) => Number(row[`c${i}`]) === 1).map((row: Row) => String(row.id)),
          )
          const expected = evaluated(name, node)
          if (JSON.stringify(ids) !== JSON.stringify(expected)) {
            mismatches.push(`${JSON.stringify(node)}: sql ${JSON.stringify(ids)}, memory ${JSON.stringify(expected)}`)
          }
        })
      }
      expect(mismatches).toEqual([])
    }

    it('on the fixture columns', async () => {
      const fields = Object.keys(recordKinds).map((name): FieldPath => [name])
      await check(
        'filter_records',
        grid([...fields, ['meta', 'size'], ['meta', 'kind'], ['meta', 'dims'], ['meta', 'dims', 'w'], ['tags', 'x']]),
      )
    })

    it('on JSON values of every type', async () => {
      const paths: FieldPath[] = [
        ['txt'],
        ['doc'],
        ['doc', 'flag'],
        ['doc', 'n'],
        ['doc', 's'],
        ['doc', 'list'],
        ['doc', 'e'],
        ['doc', 'missing'],
      ]
      await check('filter_json', grid(paths))
    })
  })

  // Hostile values are only ever values: they match what the evaluator matches, and the table survives.
  describe('injection through values', () => {
    const rows: { name: string; filter: unknown; matches: string[] }[] = [
      { name: 'a lone quote', filter: { name: "'" }, matches: [] },
      { name: 'a statement after a quote', filter: { name: "'; drop table filter_records; --" }, matches: [] },
      {
        name: 'a statement in an _in list',
        filter: { status: { _in: ["draft'); drop table filter_records; --", 'archived'] } },
        matches: ['r4'],
      },
      {
        name: 'a statement under _nin',
        filter: { status: { _nin: ["x' or '1'='1"] } },
        matches: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'],
      },
      { name: 'a tautology in a contains', filter: { note: { _contains: "' or 1=1 --" } }, matches: [] },
      { name: 'a double-quoted identifier', filter: { name: '"name"' }, matches: [] },
      { name: 'a quote escaped with a backslash', filter: { name: "\\'" }, matches: [] },
      { name: 'a backslash', filter: { note: { _contains: '\\' } }, matches: [] },
      { name: 'a backslash before a wildcard', filter: { note: { _contains: '\\%' } }, matches: [] },
      { name: 'an ESCAPE clause', filter: { note: { _ends_with: "c' escape '\\" } }, matches: [] },
      { name: 'a GLOB wildcard', filter: { name: { _contains: '*' } }, matches: [] },
      { name: 'a LIKE wildcard at the end', filter: { name: { _starts_with: '%' } }, matches: [] },
      { name: 'a comment opener', filter: { name: 'Alice/*' }, matches: [] },
      { name: 'a placeholder ?', filter: { name: '?' }, matches: [] },
      { name: 'a placeholder $1', filter: { name: { _gt: '$1' } }, matches: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'] },
      { name: 'a cast', filter: { age: '25::text' }, matches: [] },
      { name: 'a number with SQL after it', filter: { age: '25 OR 1=1' }, matches: [] },
      { name: 'a NUL byte in eq', filter: { name: 'Alice\u0000' }, matches: [] },
      {
        name: 'a NUL byte in neq',
        filter: { name: { _neq: 'Alice\u0000' } },
        matches: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'],
      },
      { name: 'a NUL byte in contains', filter: { note: { _contains: '\u0000' } }, matches: [] },
      {
        name: 'a NUL byte in ncontains',
        filter: { note: { _ncontains: 'l\u0000' } },
        matches: ['r1', 'r2', 'r4', 'r5', 'r6'],
      },
      { name: 'a NUL byte in an ordering', filter: { name: { _gt: 'Bob\u0000x' } }, matches: ['r2', 'r3', 'r4', 'r6'] },
      { name: 'a NUL byte in lte', filter: { name: { _lte: 'Alice\u0000' } }, matches: ['r1', 'r5'] },
      { name: 'a NUL byte in starts_with', filter: { name: { _starts_with: 'Al\u0000' } }, matches: [] },
      {
        name: 'a NUL byte in nends_with',
        filter: { name: { _nends_with: '\u0000' } },
        matches: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'],
      },
      { name: 'a NUL byte in a JSON value', filter: { 'meta.kind': 'image\u0000' }, matches: [] },
      { name: 'a NUL byte in array membership', filter: { tags: { _contains: 'a\u0000' } }, matches: [] },
      {
        name: 'a NUL byte in array non-membership',
        filter: { tags: { _ncontains: 'a\u0000' } },
        matches: ['r1', 'r2', 'r4', 'r5', 'r6'],
      },
      {
        name: 'a NUL byte in nin',
        filter: { status: { _nin: ['draft\u0000'] } },
        matches: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'],
      },
      { name: 'an emoji', filter: { name: '\u{1f600}' }, matches: ['r6'] },
      { name: 'an emoji prefix', filter: { name: { _starts_with: '\u{1f600}' } }, matches: ['r6'] },
      { name: 'a right-to-left override', filter: { name: '\u202eecilA' }, matches: [] },
      { name: 'a combining accent', filter: { name: 'Alice\u0301' }, matches: [] },
      { name: 'a fullwidth letter', filter: { name: '\uff21lice' }, matches: [] },
      { name: 'a zero-width space', filter: { name: { _contains: '\u200b' } }, matches: [] },
      { name: 'a newline', filter: { note: 'hello\nworld' }, matches: [] },
      { name: 'JSON text as an array member', filter: { tags: { _contains: '["a"]' } }, matches: [] },
      { name: 'JSON text as a value', filter: { meta: '{"size":10}' }, matches: [] },
      { name: 'a JSON path as a value', filter: { 'meta.kind': '$.kind' }, matches: [] },
      { name: 'a JSON path closing quote', filter: { 'meta.kind': { _contains: '"]' } }, matches: [] },
      { name: 'a string of 4096 characters', filter: { name: "'".repeat(4096) }, matches: [] },
    ]
    it.each(rows)('$name', async ({ filter, matches }) => {
      const node = resolveVariables(parseFilter(filter), filterContext)
      const ids = await run(filter)
      expect(ids).toEqual(matches)
      expect(ids).toEqual(evaluated('filter_records', node))
    })

    it('leaves the table intact', async () => {
      const rows = await f.db.selectFrom('filter_records').select(['id', 'name']).orderBy('id').execute()
      expect(rows).toEqual(filterRecords.map((r) => ({ id: r.id, name: r.name })))
    })
  })
})
