import { AppError } from '../../lib/errors.js'
import { presentGroup, type Group, type KeyedGroup } from './groups.js'
import type { Estimate } from './rows.js'
import type { JobKind, JobRow, JobStatus } from './store.js'

/** The repair block of a repair job (core-api "Structure check and repair job"). */
export interface RepairBlock {
  fixes: number
  repaired: number
  skipped: number
  failed: number
  /** The first failures (capped); `failed` counts them all. */
  failures: { id: string; reason: string }[]
}

export const failureLimit = 100

/** A job as the API shows it. Timestamps in milliseconds. */
export interface JobView {
  jobId: string
  kind: JobKind
  collection: string
  field: string
  status: JobStatus
  checked: number
  invalid: number
  estimate: Estimate | null
  groups: Group[]
  /** Where the walk got to, usable as the cursor of the scan endpoint; null before the first batch and once complete. */
  cursor: string | null
  startedAt: number
  updatedAt: number
  error?: string
  repair?: RepairBlock
}

/** The opaque cursor of a scan: the last record id walked and the fingerprint of the shape it walked against. */
export function encodeCursor(after: string, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ a: after, f: fingerprint })).toString('base64url')
}

/** Reads a cursor back; throws invalid_request for one this server did not make. */
export function decodeCursor(text: string): { after: string; fingerprint: string } {
  try {
    const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown
    if (typeof parsed === 'object' && parsed !== null) {
      const { a, f } = parsed as Record<string, unknown>
      if (typeof a === 'string' && a.length > 0 && a.length <= 64 && typeof f === 'string')
        return { after: a, fingerprint: f }
    }
  } catch {
    // falls through to the refusal
  }
  throw new AppError('invalid_request', 'cursor must be the nextCursor of an earlier batch')
}

/** A stored job row as the API shows it. */
export function presentJob(row: JobRow): JobView {
  const view: JobView = {
    jobId: row.id,
    kind: row.kind,
    collection: row.collection,
    field: row.field,
    status: row.status,
    checked: Number(row.checked),
    invalid: Number(row.invalid),
    estimate: row.estimate ? (JSON.parse(row.estimate) as Estimate) : null,
    groups: (JSON.parse(row.groups) as KeyedGroup[]).map(presentGroup),
    cursor: row.cursor !== null && row.status !== 'complete' ? encodeCursor(row.cursor, row.fingerprint) : null,
    startedAt: Number(row.started_at),
    updatedAt: Number(row.updated_at),
  }
  if (row.error !== null) view.error = row.error
  if (row.repair !== null) view.repair = JSON.parse(row.repair) as RepairBlock
  return view
}
