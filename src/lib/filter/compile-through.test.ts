import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql, type SqlBool } from 'kysely'
import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { compileFilter } from './compile-filter.js'
import type { FieldResolver, ResolvedField } from './field-resolver.js'
import { sortExpression } from './order-by.js'
import { parseFilter } from './parse.js'
import { resolveVariables } from './variables.js'

// A field a resolver reaches through a relation (`through`): the comparison on the target's column is
// wrapped in what the resolver built (an EXISTS), and a path through nothing readable (`through: false`)
// is false whatever the operator. The records module builds the real wrapper (relation-paths.ts); its
// meaning on both databases is tested over HTTP in test/api/records-relation-filters.test.ts.

const cold = new Kysely<any>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
})

const wrap = (condition: unknown) => sql<SqlBool>`exists (select 1 from "people" as "__via1" where ${condition})`
const fields: Record<string, ResolvedField> = {
  title: { column: 'title', jsonPath: [], type: 'text' },
  'assignee.name': { column: '__via1.name', jsonPath: [], type: 'text', through: wrap },
  'assignee.secret': { column: 'id', jsonPath: [], type: 'json', through: false },
}
const resolver: FieldResolver = {
  resolve: (path) => {
    const found = fields[path.join('.')]
    if (!found) throw new AppError('invalid_request', 'unknown')
    return found
  },
}

const render = (filter: unknown) =>
  cold
    .selectFrom('t')
    .select('id')
    .where(
      compileFilter(
        resolveVariables(parseFilter(filter), { userId: null, role: 'r', projectId: 'p', now: 0 }),
        resolver,
        'sqlite',
      ),
    )
    .compile()
    .sql.replace('select "id" from "t" where ', '')

describe('compileFilter through relations', () => {
  it('wraps the comparison on the target column', () => {
    expect(render({ 'assignee.name': 'Sam' })).toBe(
      'exists (select 1 from "people" as "__via1" where "__via1"."name" = ?)',
    )
  })

  it('keeps the wrapper for a test that holds for any value: the related row must exist', () => {
    expect(render({ 'assignee.name': { _nnull: true } })).toBe(
      'exists (select 1 from "people" as "__via1" where "__via1"."name" is not null)',
    )
  })

  it('folds a test that can never hold away, wrapper and all', () => {
    expect(render({ _or: [{ 'assignee.name': { _in: [null] } }, { title: 'x' }] })).toBe('"title" = ?')
  })

  it.each([
    { 'assignee.secret': 'x' },
    { 'assignee.secret': { _null: true } },
    { 'assignee.secret': { _nnull: true } },
    { 'assignee.secret': { _neq: 'x' } },
    { 'assignee.secret': { _nin: ['x'] } },
    [{ field: 'assignee.secret', op: 'empty' }],
  ])('a path through nothing readable is false whatever the operator: %j', (filter) => {
    expect(render(filter)).toBe('false')
  })

  it('a false path inside _or leaves the other branch', () => {
    expect(render({ _or: [{ 'assignee.secret': { _null: true } }, { title: 'x' }] })).toBe('"title" = ?')
  })

  it('sorting on a field reached through a relation is refused', () => {
    expect(() => sortExpression(fields['assignee.name']!, 'sqlite')).toThrow(/sorting through a relation/)
    expect(() => sortExpression(fields['assignee.secret']!, 'sqlite')).toThrow(/sorting through a relation/)
  })
})
