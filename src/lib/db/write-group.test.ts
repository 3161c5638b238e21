import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { CompiledQuery, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { openSqlite, runCompiled } from './sqlite.js'
import { createWriteGroup } from './write-group.js'

/** A file with table t, the connection under test, and a second connection that sees only what committed. */
function setup(schema = 'create table t (id integer primary key, v text unique)') {
  const file = join(mkdtempSync(join(tmpdir(), 'plinth-group-')), 'a.db')
  const raw = new Database(file)
  raw.pragma('journal_mode = WAL')
  raw.pragma('foreign_keys = ON')
  raw.exec(schema)
  const other = new Database(file, { readonly: true })
  const committed = () => (other.prepare('select v from t order by id').all() as { v: string }[]).map((r) => r.v)
  const group = createWriteGroup(raw)
  const insert = raw.prepare('insert into t (v) values (?)')
  const write = (v: string) => group.run(() => (insert.run(v), []), false)
  return { raw, group, committed, write }
}

describe('write group', () => {
  it('commits the writes of one turn together, and answers each only after the commit', async () => {
    const { committed, write } = setup()
    const answers = [write('a'), write('b'), write('c')]
    expect(committed()).toEqual([])
    const seen: string[][] = []
    await Promise.all(answers.map((a) => Promise.resolve(a).then(() => seen.push(committed()))))
    expect(seen).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ])
  })

  it('a failing statement fails alone; the rest of the group commits', async () => {
    const { committed, write } = setup()
    const first = write('a')
    expect(() => write('a')).toThrow(/UNIQUE/)
    const third = write('b')
    await Promise.all([first, third])
    expect(committed()).toEqual(['a', 'b'])
  })

  it('a read while the group is open sees its writes but answers after the commit; with no group, at once', async () => {
    const { raw, group, committed, write } = setup()
    const read = () => group.run(() => raw.prepare('select count(*) as n from t').all(), true)
    expect(read()).toEqual([{ n: 0 }]) // no group: rows, not a promise
    void write('a')
    const pending = read()
    expect(pending).toBeInstanceOf(Promise)
    expect(await pending).toEqual([{ n: 1 }])
    expect(committed()).toEqual(['a'])
  })

  it('when the commit fails, every statement of the group fails and nothing is kept', async () => {
    const { raw, group, committed } = setup(`create table p (id integer primary key);
      create table t (id integer primary key, v text, p integer references p(id) deferrable initially deferred)`)
    const good = raw.prepare('insert into t (v) values (?)')
    const orphan = raw.prepare('insert into t (v, p) values (?, 99)')
    const a = group.run(() => (good.run('a'), []), false)
    const b = group.run(() => (orphan.run('b'), []), false) // the deferred foreign key fails at COMMIT
    const results = await Promise.allSettled([a, b])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(committed()).toEqual([])
    expect(raw.inTransaction).toBe(false)
    await group.run(() => (good.run('c'), []), false) // the connection goes on
    expect(committed()).toEqual(['c'])
  })
})

describe('write groups behind openSqlite', () => {
  const fresh = async () => {
    const db = openSqlite(join(mkdtempSync(join(tmpdir(), 'plinth-group-')), 'a.db'))
    await sql`create table t (id integer primary key, v text unique)`.execute(db)
    const insert = (v: string) => runCompiled(db, CompiledQuery.raw('insert into t (v) values (?) returning v', [v]))
    const count = async () => Number((await sql<{ n: number }>`select count(*) as n from t`.execute(db)).rows[0]!.n)
    return { db, insert, count }
  }

  it("commits a pending group before Kysely's own statements and transactions run", async () => {
    const { db, insert, count } = await fresh()
    const pending = [insert('a'), insert('b')]
    // A Kysely transaction begins while the group is open: the group commits first, so BEGIN succeeds.
    await db.transaction().execute(async (trx) => {
      await sql`insert into t (v) values ('c')`.execute(trx)
      // A direct write inside someone else's transaction waits for it, then runs in a group of its own.
      pending.push(insert('d'))
    })
    expect((await Promise.all(pending)).map((rows) => rows[0])).toEqual([{ v: 'a' }, { v: 'b' }, { v: 'd' }])
    expect(await count()).toBe(4)
    await db.destroy()
  })

  it('writes that arrive during a transaction wait for it, then share one commit; its rollback does not take them', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'plinth-group-')), 'a.db')
    const db = openSqlite(file)
    await sql`create table t (id integer primary key, v text unique)`.execute(db)
    const other = new Database(file, { readonly: true })
    const committed = () => (other.prepare('select v from t order by id').all() as { v: string }[]).map((r) => r.v)
    const pending: Promise<unknown[]>[] = []
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`insert into t (v) values ('in the transaction')`.execute(trx)
        for (const v of ['x', 'y', 'z'])
          pending.push(runCompiled(db, CompiledQuery.raw('insert into t (v) values (?)', [v])))
        await new Promise((resolve) => setTimeout(resolve, 20))
        expect(committed()).toEqual([])
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    await Promise.all(pending)
    expect(committed()).toEqual(['x', 'y', 'z'])
    other.close()
    await db.destroy()
  })

  it('translates errors: a duplicate is already_exists for its caller only', async () => {
    const { db, insert, count } = await fresh()
    const results = await Promise.allSettled([insert('a'), insert('a'), insert('b')])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const err = (results[1] as PromiseRejectedResult).reason
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('already_exists')
    expect(await count()).toBe(2)
    await db.destroy()
  })

  it('closing the database commits what is pending', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'plinth-group-')), 'a.db')
    const db = openSqlite(file)
    await sql`create table t (id integer primary key, v text)`.execute(db)
    const pending = runCompiled(db, CompiledQuery.raw('insert into t (v) values (?)', ['a']))
    await db.destroy()
    await pending
    expect(new Database(file).prepare('select v from t').all()).toEqual([{ v: 'a' }])
  })
})
