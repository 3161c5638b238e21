import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely'
import { tableIdentifier, type DbHandle } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import type { TableLayout } from './table-layout.js'
import { derivedName } from './derived-name.js'
import { fieldExpression } from './document-table.js'
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

/**
 * The text PostgreSQL indexes for a document table (kv): the fields' expressions, concatenated as the
 * generated column of a column table concatenates its columns. `ref` names each field: its expression in
 * the index, the derived table's column in a query (which the planner folds into the same expression).
 */
function documentText(
  searchable: readonly FieldDef[],
  ref: (def: FieldDef) => RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql.join(
    searchable.map((f) => sql`coalesce(cast(${ref(f)} as text), '')`),
    sql` || ' ' || `,
  )
}

/** Creates the search index of a table (and fills it from existing rows). */
export async function createSearchIndex(
  handle: DbHandle,
  table: string,
  fields: readonly FieldDef[],
  layout: TableLayout = 'columns',
): Promise<void> {
  const searchable = searchableFields(fields)
  const names = searchable.map((f) => f.name)
  if (names.length === 0) return
  const db = handle.db
  const document = layout === 'document'
  if (handle.kind === 'sqlite') {
    const fts = ftsTable(table)
    const cols = sql.join(names.map((_, i) => sql.id(`c${i}`)))
    // A document table feeds the index from the document, with the expressions its reads use.
    const fieldCols = sql.join(
      document ? searchable.map((f) => fieldExpression('sqlite', f)) : names.map((n) => sql.id(n)),
    )
    const newCols = sql.join(
      document ? searchable.map((f) => fieldExpression('sqlite', f, 'new')) : names.map((n) => sql`new.${sql.id(n)}`),
    )
    const updated = document ? sql.id('doc') : fieldCols
    await sql`create virtual table ${sql.id(fts)} using fts5(${cols})`.execute(db)
    await sql`create trigger ${sql.id(`${fts}_ai`)} after insert on ${sql.id(table)} begin
      insert into ${sql.id(fts)}(rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db)
    await sql`create trigger ${sql.id(`${fts}_ad`)} after delete on ${sql.id(table)} begin
      delete from ${sql.id(fts)} where rowid = old.rowid; end`.execute(db)
    // Only updates that touch a searchable field re-index the row.
    await sql`create trigger ${sql.id(`${fts}_au`)} after update of ${updated} on ${sql.id(table)} begin
      delete from ${sql.id(fts)} where rowid = old.rowid;
      insert into ${sql.id(fts)}(rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db)
    await sql`insert into ${sql.id(fts)}(rowid, ${cols}) select rowid, ${fieldCols} from ${sql.id(table)}`.execute(db)
    return
  }
  if (document) {
    // An expression index: no column is added, and a search spelled with the same expression uses it.
    const text = documentText(searchable, (f) => fieldExpression('postgres', f))
    await sql`create index ${sql.id(ginIndex(table))} on ${tableIdentifier(handle, table)} using gin ((to_tsvector('simple', ${text})))`.execute(
      db,
    )
    return
  }
  const text = sql.join(
    names.map((n) => sql`coalesce(${sql.id(n)}::text, '')`),
    sql` || ' ' || `,
  )
  await sql`alter table ${tableIdentifier(handle, table)} add column _search tsvector generated always as (to_tsvector('simple', ${text})) stored`.execute(
    db,
  )
  await sql`create index ${sql.id(ginIndex(table))} on ${tableIdentifier(handle, table)} using gin (_search)`.execute(
    db,
  )
}

/**
 * Removes the search index of a table, if any. Only what is provably this table's is dropped, by what it
 * is rather than by its name alone: on SQLite the FTS5 virtual table `<table>__search` (never an ordinary
 * table: before collection names lost `__`, a collection could be named `qx__search`, and dropping it with
 * `qx`'s search index lost its data) and the triggers on `table` itself; on PostgreSQL the generated
 * column, which takes its GIN index with it whatever that index is named.
 */
export async function dropSearchIndex(handle: DbHandle, table: string, layout: TableLayout = 'columns'): Promise<void> {
  const db = handle.db
  if (handle.kind === 'sqlite') {
    const fts = ftsTable(table)
    const triggers = ['_ai', '_ad', '_au'].map((suffix) => `${fts}${suffix}`)
    const objects = await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`
      select type, name, tbl_name, sql from sqlite_master where name in (${sql.join([fts, ...triggers])})`.execute(db)
    for (const o of objects.rows) {
      if (o.type === 'trigger' && o.tbl_name === table && triggers.includes(o.name))
        await sql`drop trigger ${sql.id(o.name)}`.execute(db)
    }
    if (objects.rows.some((o) => o.type === 'table' && o.name === fts && isFts5Table(o.sql)))
      await sql`drop table ${sql.id(fts)}`.execute(db)
    return
  }
  if (layout === 'document') {
    await sql`drop index if exists ${tableIdentifier(handle, ginIndex(table))}`.execute(db)
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
export function searchCondition(
  handle: DbHandle,
  table: string,
  fields: readonly FieldDef[],
  query: string,
  layout: TableLayout = 'columns',
  unindexed = false,
): Expression<SqlBool> {
  const searchable = searchableFields(fields)
  if (searchable.length === 0) throw new AppError('invalid_request', 'This collection has no text fields to search')
  const terms = searchTerms(query)
  if (terms.length === 0) throw new AppError('invalid_request', 'search needs at least one word')
  if (handle.kind === 'sqlite') {
    const match = terms.map((t) => `"${t}"*`).join(' ')
    const fts = ftsTable(table)
    // A document table is read through a derived table, which has no rowid: the rows are found by id.
    if (layout === 'document') {
      return sql<SqlBool>`${sql.ref(`${table}.id`)} in (select id from ${sql.id(table)} where rowid in (select rowid from ${sql.id(fts)} where ${sql.id(fts)} match ${match}))`
    }
    // `+rowid` (a list's plan choice, records/list-plan.ts): the match is tested per row, not used to find them.
    const rowid = unindexed ? sql`+${sql.id(table)}.rowid` : sql`${sql.id(table)}.rowid`
    return sql<SqlBool>`${rowid} in (select rowid from ${sql.id(fts)} where ${sql.id(fts)} match ${match})`
  }
  const tsquery = terms.map((t) => `${t.toLowerCase()}:*`).join(' & ')
  if (layout === 'document') {
    const text = documentText(searchable, (f) => sql.ref(`${table}.${f.name}`))
    return sql<SqlBool>`to_tsvector('simple', ${text}) @@ to_tsquery('simple', ${tsquery})`
  }
  return sql<SqlBool>`${sql.id(table)}._search @@ to_tsquery('simple', ${tsquery})`
}
