import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import { AppError } from '../errors.js'
import { translateDbError } from './translate-error.js'

// Real driver errors, produced by real databases, through the translating dialect.
describe.each(dialects())('driver errors on %s', (kind) => {
  let f: DialectFixture
  beforeAll(async () => {
    f = await openFixture(kind)
    await f.db.schema
      .createTable('parent')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('age', 'integer', (c) => c.check(sql`age >= 0`))
      .execute()
    await f.db.schema
      .createTable('child')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('parent_id', 'text', (c) => c.references('parent.id'))
      .execute()
    await f.db
      .insertInto('parent')
      .values({ id: 'p1', email: 'secret-address@example.com', name: 'x', age: 1 })
      .execute()
  })
  afterAll(async () => {
    await f?.close()
  })

  const failure = async (run: () => Promise<unknown>): Promise<AppError> => {
    try {
      await run()
    } catch (err) {
      expect(err).toBeInstanceOf(AppError)
      return err as AppError
    }
    throw new Error('expected the query to fail')
  }

  it('unique violation → 409 already_exists naming the column, not the value', async () => {
    const err = await failure(() =>
      f.db.insertInto('parent').values({ id: 'p2', email: 'secret-address@example.com', name: 'y' }).execute(),
    )
    expect(err.code).toBe('already_exists')
    expect(err.status).toBe(409)
    expect(err.details).toEqual({ fields: ['email'] })
    expect(JSON.stringify({ m: err.message, d: err.details })).not.toContain('secret-address')
  })

  it('unique violation of an expression index over a JSON document key (a kv field) names the key', async () => {
    const text = f.kind === 'sqlite' ? 'TEXT' : 'jsonb'
    await sql`create table docs (id text primary key, doc ${sql.raw(text)})`.execute(f.db)
    const key = f.kind === 'sqlite' ? sql`json_extract(doc, '$.sku')` : sql`(doc ->> 'sku')`
    await sql`create unique index docs__sku__uq on docs ((${key}))`.execute(f.db)
    await sql`insert into docs values ('a', '{"sku":"secret-sku"}')`.execute(f.db)
    const err = await failure(() => sql`insert into docs values ('b', '{"sku":"secret-sku"}')`.execute(f.db))
    expect(err.code).toBe('already_exists')
    expect(err.details).toEqual({ fields: ['sku'] })
    expect(JSON.stringify({ m: err.message, d: err.details })).not.toContain('secret-sku')
  })

  it('primary key violation → already_exists', async () => {
    const err = await failure(() => f.db.insertInto('parent').values({ id: 'p1', name: 'z' }).execute())
    expect(err.code).toBe('already_exists')
    expect(err.details).toEqual({ fields: ['id'] })
  })

  it('not-null violation → 400 missing_field', async () => {
    const err = await failure(() => f.db.insertInto('parent').values({ id: 'p3', name: null }).execute())
    expect(err.code).toBe('missing_field')
    expect(err.details).toEqual({ fields: ['name'] })
  })

  it('foreign key violation → 409 conflict', async () => {
    const err = await failure(() => f.db.insertInto('child').values({ id: 'c1', parent_id: 'missing' }).execute())
    expect(err.code).toBe('conflict')
  })

  it('check violation → 422 validation_error', async () => {
    const err = await failure(() => f.db.insertInto('parent').values({ id: 'p4', name: 'n', age: -1 }).execute())
    expect(err.code).toBe('validation_error')
  })

  it('errors inside a transaction are translated and roll it back', async () => {
    const err = await failure(() =>
      f.db.transaction().execute(async (trx) => {
        await trx.insertInto('parent').values({ id: 'p5', name: 'ok' }).execute()
        await trx.insertInto('parent').values({ id: 'p5', name: 'dup' }).execute()
      }),
    )
    expect(err.code).toBe('already_exists')
    const row = await f.db.selectFrom('parent').select('id').where('id', '=', 'p5').executeTakeFirst()
    expect(row).toBeUndefined()
  })

  it('anything else → internal, keeping the driver error as its cause', async () => {
    const err = await failure(() => sql`select * from no_such_table`.execute(f.db))
    expect(err.code).toBe('internal')
    expect(err.message).toBe('Database error')
    expect(err.cause).toBeDefined()
  })
})

describe('translateDbError', () => {
  it.each([
    [{ code: 'SQLITE_BUSY', message: 'database is locked' }, 'service_unavailable'],
    [{ code: 'SQLITE_FULL', message: 'disk full' }, 'service_unavailable'],
    [{ code: '40001', severity: 'ERROR', message: 'could not serialize' }, 'conflict'],
    [{ code: '57014', severity: 'ERROR', message: 'canceling statement' }, 'service_unavailable'],
    [{ code: '08006', severity: 'FATAL', message: 'connection failure' }, 'service_unavailable'],
    [{ code: '22P02', severity: 'ERROR', message: 'invalid input syntax' }, 'invalid_field'],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, 'service_unavailable'],
    [new Error('anything'), 'internal'],
  ])('%o → %s', (input, code) => {
    expect(translateDbError(input).code).toBe(code)
  })

  it('passes an AppError through untouched', () => {
    const original = new AppError('not_found', 'x')
    expect(translateDbError(original)).toBe(original)
  })

  it('asks the client to retry when the database is busy', () => {
    expect(translateDbError({ code: 'SQLITE_BUSY' }).headers).toEqual({ 'Retry-After': '1' })
  })
})
