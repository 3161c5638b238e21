import { structures } from '../collections/index.js'
import type { FieldStructure } from './field-structure.js'
import type { GroupSet } from './groups.js'

/** One row as a scan sees it: its id, the field's API value, and roughly how many bytes it took. */
export interface ScanRow {
  readonly id: string
  readonly value: unknown
  readonly bytes: number
}

/** The candidate rows of a scan in id order: soft-deleted rows and rows outside the caller's scope are never among them. */
export interface RowSource {
  /** Up to `count` rows with an id after `after` (all from the first when null). */
  next(after: string | null, count: number): Promise<ScanRow[]>
}

export interface BatchResult {
  /** Rows examined. */
  checked: number
  /** Rows examined that have at least one issue. */
  invalid: number
  /** The last row examined (the cursor to go on from), or the `after` given when none was. */
  lastId: string | null
  /** No candidate row is left after `lastId`. */
  done: boolean
}

export const scanLimits = {
  /** Rows read per query inside a batch. */
  chunk: 50,
  /** Examined bytes per batch; a batch stops before the row that would pass it (one row always goes). */
  bytes: 2 * 1024 * 1024,
  /** Issues of one record looked at (a record with more still counts once per group it has). */
  issuesPerRecord: 1000,
} as const

/** Every issue of one value (null has none), up to the per-record cap. */
export function issuesOf(value: unknown, fs: FieldStructure): structures.StructureIssue[] {
  if (value === null || value === undefined) return []
  const issues: structures.StructureIssue[] = []
  structures.visitIssues(value, fs.shape, (issue) => {
    issues.push(issue)
    return issues.length < scanLimits.issuesPerRecord
  })
  return issues
}

/**
 * Examines up to `limit` candidate rows after `after`, adding their issues to `groups`; stops early at
 * `byteCap` examined bytes. `done` is known exactly: at the limit, one more row is looked for.
 */
export async function scanBatch(
  source: RowSource,
  fs: FieldStructure,
  groups: GroupSet,
  after: string | null,
  limit: number,
  byteCap: number = scanLimits.bytes,
): Promise<BatchResult> {
  const result: BatchResult = { checked: 0, invalid: 0, lastId: after, done: false }
  let bytes = 0
  while (result.checked < limit) {
    const want = Math.min(scanLimits.chunk, limit - result.checked)
    const rows = await source.next(result.lastId, want)
    for (const row of rows) {
      if (result.checked > 0 && bytes + row.bytes > byteCap) return result
      if (groups.add(row.id, issuesOf(row.value, fs))) result.invalid++
      result.checked++
      bytes += row.bytes
      result.lastId = row.id
    }
    if (rows.length < want) {
      result.done = true
      return result
    }
  }
  result.done = (await source.next(result.lastId, 1)).length === 0
  return result
}
