import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import { runMigrations, type Migration } from './migrate.js'

const createA: Migration = {
  name: '0001-a',
  up: (db) =>
    db.schema
      .createTable('a')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .execute(),
}
const createB: Migration = {
  name: '0002-b',
  up: (db) =>
    db.schema
      .createTable('b')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .execute(),
}
const failing: Migration = {
  name: '0003-fails',
  async up(db) {
    await db.schema.createTable('c').addColumn('id', 'text').execute()
    await sql`this is not sql`.execute(db)
  },
}

describe.each(dialects())('runMigrations on %s', (kind) => {
  let f: DialectFixture
  afterEach(async () => {
    await f?.close()
  })

  it('applies pending migrations in order, once', async () => {
    f = await openFixture(kind)
    expect(await runMigrations(f.db, kind, [createA])).toEqual(['0001-a'])
    expect(await runMigrations(f.db, kind, [createA, createB])).toEqual(['0002-b'])
    expect(await runMigrations(f.db, kind, [createA, createB])).toEqual([])
    await f.db.insertInto('a').values({ id: 'x' }).execute()
    await f.db.insertInto('b').values({ id: 'y' }).execute()
  })

  it('rolls a failing migration back entirely and does not record it', async () => {
    f = await openFixture(kind)
    await expect(runMigrations(f.db, kind, [createA, failing])).rejects.toThrow()
    const names = await f.db.selectFrom('plinth_migrations').select('name').execute()
    expect(names).toEqual([{ name: '0001-a' }])
    // Table c was created inside the failed migration's transaction and must be gone.
    await expect(f.db.selectFrom('c').selectAll().execute()).rejects.toMatchObject({ code: 'internal' })
  })

  it('refuses to run against a database migrated by a newer build', async () => {
    f = await openFixture(kind)
    await runMigrations(f.db, kind, [createA, createB])
    await expect(runMigrations(f.db, kind, [createA])).rejects.toThrow(/0002-b/)
  })

  it('refuses a list out of order', async () => {
    f = await openFixture(kind)
    await expect(runMigrations(f.db, kind, [createB, createA])).rejects.toThrow(/out of order/)
  })

  it('two runners at once apply each migration exactly once', async () => {
    f = await openFixture(kind)
    const results = await Promise.all([
      runMigrations(f.db, kind, [createA, createB]),
      runMigrations(f.db, kind, [createA, createB]),
    ])
    expect(results.flat().sort()).toEqual(['0001-a', '0002-b'])
  })
})
