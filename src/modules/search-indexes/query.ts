import type Database from 'better-sqlite3'
import { AppError, isAppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { RecordsService } from '../records/index.js'
import { markClose, markOpen } from './compile.js'
import type { OpenIndexFile } from './files.js'
import { ftsExpression, inColumns } from './fts-query.js'
import type { SearchHit } from './schemas.js'

/** Candidates read from the file per step while looking for hits the caller may see. */
const batchMin = 50
/** Steps per source before giving up on finding more visible hits (a caller who sees few of many matches). */
const maxSteps = 20

interface Candidate {
  record_id: string
  rank: number
  [snippet: `s${number}`]: string
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Snippet text as safe HTML: the record's text escaped, the match marks as <mark>. */
export function snippetHtml(raw: string): string {
  return raw
    .replace(/[&<>"']/g, (c) => escapes[c]!)
    .replaceAll(markOpen, '<mark>')
    .replaceAll(markClose, '</mark>')
}

/** A refusal that means "this caller sees nothing of this source" rather than a failure of the query. */
function hidden(err: unknown): boolean {
  return isAppError(err) && ['forbidden', 'unauthorized', 'collection_not_found', 'not_found'].includes(err.code)
}

/**
 * Runs a search over a built file as `principal`. Per source, the caller must be able to read the
 * collection now; only the fields it may read now are matched and quoted (FTS5 column filter), and when
 * its read scope is limited to some rows, each hit is checked through the records service (a row it
 * cannot read, or one gone since the build, is left out). A caller who reads every row of a collection
 * sees the file as built, rows deleted since included, until a rebuild (core-api: stale indexes keep
 * serving). Ranked by bm25 across sources. Throws invalid_request (a malformed query).
 */
export async function searchFile(
  records: Pick<RecordsService, 'open' | 'find'>,
  principal: Principal,
  file: OpenIndexFile,
  q: string,
  limit: number,
): Promise<SearchHit[]> {
  const expression = ftsExpression(q)
  const { db, meta } = file
  const columnNames = Object.keys(meta.columns)
  const hits: (SearchHit & { rank: number })[] = []
  for (const source of meta.sources) {
    let opened
    try {
      opened = await records.open(principal, source.collection, 'read')
    } catch (err) {
      if (hidden(err)) continue
      throw err
    }
    const allowlist = opened.scope.fields
    const fields = source.fields.filter(
      (f) => opened.shape.byName.has(f) && (allowlist === null || allowlist.includes(f)),
    )
    if (fields.length === 0) continue
    // FTS5 column i+2 is columns[name] (collection and record_id come first).
    const positions = fields.map((f) => 2 + columnNames.indexOf(f))
    const snippets = positions.map((p, i) => `snippet(docs, ${p}, char(2), char(3), '…', 12) as s${i}`).join(', ')
    const statement = db.prepare(
      `select record_id, bm25(docs) as rank, ${snippets} from docs where docs match ? and collection = ? order by rank limit ? offset ?`,
    )
    const match = inColumns(
      fields.map((f) => meta.columns[f]!),
      expression,
    )
    const batch = Math.max(batchMin, limit * 2)
    const found: (SearchHit & { rank: number })[] = []
    for (let step = 0; step < maxSteps && found.length < limit; step++) {
      const candidates = run(statement, [match, source.collection, batch, step * batch])
      if (candidates.length === 0) break
      const visible =
        opened.scope.rows === null
          ? null
          : await visibleIds(
              records,
              principal,
              source.collection,
              candidates.map((c) => c.record_id),
            )
      for (const candidate of candidates) {
        if (visible && !visible.has(candidate.record_id)) continue
        const at = fields.findIndex((_, i) => candidate[`s${i}`]?.includes(markOpen))
        const chosen = at < 0 ? 0 : at
        found.push({
          collection: source.collection,
          id: candidate.record_id,
          rank: candidate.rank,
          score: 0,
          field: fields[chosen] ?? null,
          snippet: snippetHtml(candidate[`s${chosen}`] ?? ''),
        })
        if (found.length === limit) break
      }
      if (candidates.length < batch) break
    }
    hits.push(...found)
  }
  hits.sort((a, b) => a.rank - b.rank)
  return hits.slice(0, limit).map(({ rank, ...hit }) => ({ ...hit, score: Math.round(-rank * 1e6) / 1e6 }))
}

/** The statement's rows; an FTS5 refusal of the expression (which `ftsExpression` should never give) is a 400, not a 500. */
function run(statement: Database.Statement, params: unknown[]): Candidate[] {
  try {
    return statement.all(...params) as Candidate[]
  } catch (err) {
    if (err instanceof Error && /fts5|syntax error|unterminated|no such column/i.test(err.message)) {
      throw new AppError('invalid_request', 'q: the search text could not be read as a query', { field: 'q' })
    }
    throw err
  }
}

/** Which of these record ids the caller may read now (list rules: row filter, shares, owner scoping). */
async function visibleIds(
  records: Pick<RecordsService, 'find'>,
  principal: Principal,
  collection: string,
  ids: string[],
): Promise<Set<string>> {
  const page = await records.find(principal, collection, {
    filter: JSON.stringify({ id: { _in: ids } }),
    limit: ids.length,
    offset: 0,
    fields: ['id'],
  })
  return new Set(page.data.map((r) => String(r.id)))
}
