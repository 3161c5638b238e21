import Database from 'better-sqlite3'
import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { RecordsService } from '../records/index.js'
import { searchIndexLimits, type SearchIndexSource } from './schemas.js'

/** The format an index file is written in; a file of another format is not read. */
export const fileFormat = 'plinth-search-index-1'
/** Records read per page while compiling. */
const pageSize = 500
/** Marks a match in snippets; taken out of indexed text so a record cannot forge one. */
export const markOpen = '\u0002'
export const markClose = '\u0003'
const marks = new RegExp(`[${markOpen}${markClose}]`, 'g')

/** What an index file says about itself (its `meta` table). */
export interface FileMeta {
  readonly format: string
  readonly buildId: string
  /** Field name → FTS5 column (c0, c1, …): one column per distinct field name across the sources. */
  readonly columns: Readonly<Record<string, string>>
  readonly sources: readonly SearchIndexSource[]
}

/** Field names → FTS5 column names, in name order. */
export function columnsOf(sources: readonly SearchIndexSource[]): Record<string, string> {
  const names = [...new Set(sources.flatMap((s) => s.fields))].sort()
  return Object.fromEntries(names.map((name, i) => [name, `c${i}`]))
}

/** A record's value as text to index: strings as they are, numbers and booleans written out, lists and maps (translations, JSON) by their values. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value.replace(marks, ' ')
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (Array.isArray(value)) return value.map(textOf).filter(Boolean).join(' ')
  if (typeof value === 'object')
    return Object.values(value as Record<string, unknown>)
      .map(textOf)
      .filter(Boolean)
      .join(' ')
  return ''
}

/**
 * Compiles the sources into an SQLite FTS5 file at `file`, reading every record through the records
 * service as `principal`: row and column rules apply, so the file holds only what that caller may read
 * (a field it may not read is not in its records). Throws what the records service throws for a source
 * (forbidden, collection_not_found, invalid_request for a field the collection no longer has),
 * limit_exceeded past `searchIndexLimits.documents`, and the signal's reason when aborted.
 */
export async function compileIndex(
  records: Pick<RecordsService, 'list'>,
  principal: Principal,
  sources: readonly SearchIndexSource[],
  file: string,
  buildId: string,
  signal?: AbortSignal,
): Promise<{ documentCount: number }> {
  const columns = columnsOf(sources)
  const db = new Database(file)
  try {
    db.pragma('journal_mode = OFF')
    db.pragma('synchronous = OFF')
    db.exec('create table meta (key text primary key, value text not null)')
    const meta: FileMeta = { format: fileFormat, buildId, columns, sources }
    const putMeta = db.prepare('insert into meta (key, value) values (?, ?)')
    for (const [key, value] of Object.entries(meta)) putMeta.run(key, JSON.stringify(value))
    const names = Object.values(columns)
    // Column names are ours (c0, c1, …), never a field name: nothing from a request reaches this DDL.
    db.exec(
      `create virtual table docs using fts5(collection unindexed, record_id unindexed, ${names.join(', ')}, tokenize = 'unicode61 remove_diacritics 2')`,
    )
    const insert = db.prepare(
      `insert into docs (collection, record_id, ${names.join(', ')}) values (${['?', '?', ...names.map(() => '?')].join(', ')})`,
    )
    let documentCount = 0
    for (const source of sources) {
      let cursor = ''
      for (;;) {
        signal?.throwIfAborted()
        const page = await records.list(principal, source.collection, {
          page: 1,
          limit: pageSize,
          cursor,
          fields: source.fields.join(','),
        })
        const rows = page.data as Record<string, unknown>[]
        documentCount += rows.length
        if (documentCount > searchIndexLimits.documents) {
          throw new AppError('limit_exceeded', `A search index holds at most ${searchIndexLimits.documents} records`, {
            limit: searchIndexLimits.documents,
          })
        }
        db.transaction(() => {
          for (const row of rows) {
            const values = Object.keys(columns).map((field) =>
              source.fields.includes(field) ? textOf(row[field]) : null,
            )
            insert.run(source.collection, String(row.id), ...values)
          }
        })()
        const next = page.cursors?.next ?? null
        if (next === null || rows.length === 0) break
        cursor = next
      }
    }
    db.exec(`insert into docs (docs) values ('optimize')`)
    return { documentCount }
  } finally {
    db.close()
  }
}

/** Reads an index file's meta table. Throws service_unavailable for a file of another format. */
export function readMeta(db: Database.Database): FileMeta {
  const rows = db.prepare('select key, value from meta').all() as { key: string; value: string }[]
  const meta = Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value) as unknown])) as unknown as FileMeta
  if (meta.format !== fileFormat)
    throw new AppError(
      'service_unavailable',
      'The search index file is of a format this server does not read; rebuild the index',
    )
  return meta
}
