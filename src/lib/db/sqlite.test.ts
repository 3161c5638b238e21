import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import { openSqlite, withStatementCache } from './sqlite.js'

const fresh = () => openSqlite(join(mkdtempSync(join(tmpdir(), 'plinth-sqlite-')), 'a.db'))

describe('openSqlite', () => {
  it('sets WAL, synchronous=NORMAL, a busy timeout and foreign keys', async () => {
    const db = fresh()
    const pragma = async (name: string) =>
      (await sql.raw(`pragma ${name}`).execute(db)).rows[0] as Record<string, unknown>
    expect(await pragma('journal_mode')).toEqual({ journal_mode: 'wal' })
    expect(await pragma('synchronous')).toEqual({ synchronous: 1 })
    expect(await pragma('busy_timeout')).toEqual({ timeout: 5000 })
    expect(await pragma('foreign_keys')).toEqual({ foreign_keys: 1 })
    await db.destroy()
  })

  it('limits ANALYZE, and gathers missing planner statistics when it opens (PRAGMA optimize)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'plinth-sqlite-')), 'a.db')
    const raw = new Database(file)
    raw.exec('create table t (id integer primary key, k text); create index t_k on t (k)')
    const insert = raw.prepare('insert into t (k) values (?)')
    raw.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`k${i % 50}`)
    })()
    raw.close()
    const db = openSqlite(file)
    expect((await sql.raw('pragma analysis_limit').execute(db)).rows[0]).toEqual({ analysis_limit: 1000 })
    const stats = await sql<{ tbl: string }>`select tbl from sqlite_stat1 where tbl = 't'`.execute(db)
    expect(stats.rows.length).toBeGreaterThan(0)
    await db.destroy()
  })

  it('binds booleans as 1 and 0, in values and in raw SQL', async () => {
    const db = fresh()
    await db.schema.createTable('t').addColumn('id', 'integer').addColumn('flag', 'boolean').execute()
    await db
      .insertInto('t')
      .values([
        { id: 1, flag: true },
        { id: 2, flag: false },
      ])
      .execute()
    const rows = await db.selectFrom('t').selectAll().where('flag', '=', true).execute()
    expect(rows).toEqual([{ id: 1, flag: 1 }])
    const raw = await sql<{ id: number }>`select id from t where flag = ${false}`.execute(db)
    expect(raw.rows).toEqual([{ id: 2 }])
    const inList = await db.selectFrom('t').select('id').where('flag', 'in', [true, false]).orderBy('id').execute()
    expect(inList).toEqual([{ id: 1 }, { id: 2 }])
    await db.destroy()
  })

  it('reuses prepared statements, but not one that is still iterating', () => {
    const raw = new Database(':memory:')
    raw.exec('create table n (v integer); insert into n values (1), (2)')
    const cached = withStatementCache(raw)
    const a = cached.prepare('select v from n') as unknown as Database.Statement
    expect(cached.prepare('select v from n')).toBe(a)
    const iterator = a.iterate()
    iterator.next()
    const b = cached.prepare('select v from n') as unknown as Database.Statement
    expect(b).not.toBe(a)
    expect(b.all()).toEqual([{ v: 1 }, { v: 2 }])
    iterator.return?.()
    expect(cached.prepare('select v from n')).toBe(a)
    cached.close()
  })
})
