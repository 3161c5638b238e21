import { sql, type Expression, type SqlBool } from 'kysely'
import { tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import { derivedName } from './derived-name.js'
import { fieldTypeOf, type FieldDef } from './field-types/index.js'

/**
 * Full-text search over a collection's text-like fields, kept in step with every write by the database
 * itself: SQLite FTS5 (a table fed by triggers), PostgreSQL a generated tsvector column with a GIN index.
 * The `simple` configuration / unicode61 tokenizer: no language stemming, case and (SQLite) diacritics
 * folded.
 *
 * The FTS5 table keeps its own copy of the text under positional column names (c0, c1, …) rather than
 * the fields' names: FTS5 refuses columns named `rank` or `rowid`, or like the table itself, and an
 * external-content table would have to use the content table's names.
 */

/** The fields that feed search. */
export function searchableFields(fields: readonly FieldDef[]): FieldDef[] {
  return fields.filter((f) => fieldTypeOf(f.type).searchable)
}

function ftsTable(table: string): string {
  return `${table}__search`
}

function ginIndex(table: string): string {
  return derivedName(`${table}__search__gin`)
}

/** Creates the search index of a table (and fills it from existing rows). */
export async function createSearchIndex(handle: DbHandle, table: string, fields: readonly FieldDef[]): Promise<void> {
  const names = searchableFields(fields).map((f) => f.name)
  if (names.length === 0) return
  const db = handle.db
  if (handle.kind === 'sqlite') {
    const fts = ftsTable(table)
    const cols = sql.join(names.map((_, i) => sql.id(`c${i}`)))
    const fieldCols = sql.join(names.map((n) => sql.id(n)))
    const newCols = sql.join(names.map((n) => sql`new.${sql.id(n)}`))
    await sql`create virtual table ${sql.id(fts)} using fts5(${cols})`.execute(db)
    await sql`create trigger ${sql.id(`${fts}_ai`)} after insert on ${sql.id(table)} begin
      insert into ${sql.id(fts)}(rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db)
    await sql`create trigger ${sql.id(`${fts}_ad`)} after delete on ${sql.id(table)} begin
      delete from ${sql.id(fts)} where rowid = old.rowid; end`.execute(db)
    // Only updates that touch a searchable field re-index the row.
    await sql`create trigger ${sql.id(`${fts}_au`)} after update of ${fieldCols} on ${sql.id(table)} begin
      delete from ${sql.id(fts)} where rowid = old.rowid;
      insert into ${sql.id(fts)}(rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db)
    await sql`insert into ${sql.id(fts)}(rowid, ${cols}) select rowid, ${fieldCols} from ${sql.id(table)}`.execute(db)
    return
  }
  const text = sql.join(
    names.map((n) => sql`coalesce(${sql.id(n)}::text, '')`),
    sql` || ' ' || `,
  )
  await sql`alter table ${tableIdentifier(handle, table)} add column _search tsvector generated always as (to_tsvector('simple', ${text})) stored`.execute(db)
  await sql`create index ${sql.id(ginIndex(table))} on ${tableIdentifier(handle, table)} using gin (_search)`.execute(db)
}

/**
 * Removes the search index of a table, if any. Only what is provably this table's is dropped, by what it
 * is rather than by its name alone: on SQLite the FTS5 virtual table `<table>__search` (never an ordinary
 * table: before collection names lost `__`, a collection could be named `qx__search`, and dropping it with
 * `qx`'s search index lost its data) and the triggers on `table` itself; on PostgreSQL the generated
 * column, which takes its GIN index with it whatever that index is named.
 */
export async function dropSearchIndex(handle: DbHandle, table: string): Promise<void> {
  const db = handle.db
  if (handle.kind === 'sqlite') {
    const fts = ftsTable(table)
    const triggers = ['_ai', '_ad', '_au'].map((suffix) => `${fts}${suffix}`)
    const objects = await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`
      select type, name, tbl_name, sql from sqlite_master where name in (${sql.join([fts, ...triggers])})`.execute(db)
    for (const o of objects.rows) {
      if (o.type === 'trigger' && o.tbl_name === table && triggers.includes(o.name)) await sql`drop trigger ${sql.id(o.name)}`.execute(db)
    }
    if (objects.rows.some((o) => o.type === 'table' && o.name === fts && isFts5Table(o.sql))) await sql`drop table ${sql.id(fts)}`.execute(db)
    return
  }
  await sql`alter table ${tableIdentifier(handle, table)} drop column if exists _search`.execute(db)
}

/** Whether an sqlite_master `sql` is an FTS5 virtual table's (what createSearchIndex makes). */
function isFts5Table(ddl: string | null): boolean {
  return ddl !== null && /^\s*create\s+virtual\s+table\s[\s\S]*\busing\s+fts5\s*\(/i.test(ddl)
}

/** Words of a search query: letters and digits only, at most 16, so nothing reaches the query syntax. */
export function searchTerms(query: string): string[] {
  const terms = query.normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? []
  return terms.slice(0, 16).map((t) => t.slice(0, 64))
}

/**
 * A condition matching rows that contain every term (each as a word prefix). Throws invalid_request when
 * the query has no word or the collection has no searchable field.
 */
export function searchCondition(handle: DbHandle, table: string, fields: readonly FieldDef[], query: string): Expression<SqlBool> {
  if (searchableFields(fields).length === 0) throw new AppError('invalid_request', 'This collection has no text fields to search')
  const terms = searchTerms(query)
  if (terms.length === 0) throw new AppError('invalid_request', 'search needs at least one word')
  if (handle.kind === 'sqlite') {
    const match = terms.map((t) => `"${t}"*`).join(' ')
    const fts = ftsTable(table)
    return sql<SqlBool>`${sql.id(table)}.rowid in (select rowid from ${sql.id(fts)} where ${sql.id(fts)} match ${match})`
  }
  const tsquery = terms.map((t) => `${t.toLowerCase()}:*`).join(' & ')
  return sql<SqlBool>`${sql.id(table)}._search @@ to_tsquery('simple', ${tsquery})`
}
