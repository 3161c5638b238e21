import { sql, type Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openSqlite, type DbHandle } from '../../lib/db/index.js'
import type { FieldDef } from './field-types/index.js'
import { createSearchIndex, dropSearchIndex } from './search-index.js'

// dropSearchIndex on SQLite drops `<table>__search` only when it is an FTS5 table, and only the triggers on
// the table itself: before collection names lost `__`, a collection could be named `qx__search`.

const title: FieldDef = { name: 'title', type: 'text', required: false, unique: false, indexed: false }

let db: Kysely<any>
let handle: DbHandle

beforeEach(() => {
  db = openSqlite(':memory:')
  handle = { kind: 'sqlite', db, schema: null }
})
afterEach(async () => {
  await db.destroy()
})

async function objects(): Promise<string[]> {
  const rows = await sql<{
    type: string
    name: string
  }>`select type, name from sqlite_master where name not like 'sqlite_%' order by type, name`.execute(db)
  return rows.rows.map((r) => `${r.type} ${r.name}`)
}

describe('dropSearchIndex (SQLite)', () => {
  it('drops the table’s FTS5 index and its triggers', async () => {
    await sql`create table qx (title text)`.execute(db)
    await createSearchIndex(handle, 'qx', [title])
    expect(await objects()).toEqual(
      expect.arrayContaining([
        'table qx__search',
        'trigger qx__search_ai',
        'trigger qx__search_ad',
        'trigger qx__search_au',
      ]),
    )
    await dropSearchIndex(handle, 'qx')
    expect(await objects()).toEqual(['table qx'])
  })

  it('leaves an ordinary table named <table>__search alone, rows and all', async () => {
    await sql`create table qx (title text)`.execute(db)
    await sql`create table qx__search (id text primary key, note text)`.execute(db)
    await sql`insert into qx__search values ('1', 'precious')`.execute(db)
    await dropSearchIndex(handle, 'qx')
    expect((await sql`select id, note from qx__search`.execute(db)).rows).toEqual([{ id: '1', note: 'precious' }])
  })

  it('leaves a view and a virtual table of another kind (FTS4) alone', async () => {
    await sql`create table qx (title text)`.execute(db)
    await sql`create view qx__search as select 1 as one`.execute(db)
    await sql`create table zz (title text)`.execute(db)
    await sql`create virtual table zz__search using fts4(c0)`.execute(db)
    await dropSearchIndex(handle, 'qx')
    await dropSearchIndex(handle, 'zz')
    expect(await objects()).toEqual(expect.arrayContaining(['view qx__search', 'table zz__search']))
  })

  it('leaves triggers with those names on another table alone', async () => {
    await sql`create table qx (title text)`.execute(db)
    await sql`create table other (title text)`.execute(db)
    await sql`create table log (line text)`.execute(db)
    await sql`create trigger qx__search_ai after insert on other begin insert into log values (new.title); end`.execute(
      db,
    )
    await dropSearchIndex(handle, 'qx')
    await sql`insert into other values ('still fires')`.execute(db)
    expect((await sql`select line from log`.execute(db)).rows).toEqual([{ line: 'still fires' }])
  })

  it('does nothing when there is no search index', async () => {
    await sql`create table qx (title text)`.execute(db)
    await dropSearchIndex(handle, 'qx')
    expect(await objects()).toEqual(['table qx'])
  })
})
