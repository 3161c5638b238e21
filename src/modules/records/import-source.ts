import { createHash } from 'node:crypto'
import { AppError } from '../../lib/errors.js'
import type { UnknownProperties } from './import-jobs.js'

// What an import reads: a body turned into numbered rows, each read as a create's body when its turn comes.

export const importLimits = {
  /** Records (non-empty lines) read per request; the rest is left out and `truncated` is true. */
  records: 1000,
} as const

/** A non-empty line of an NDJSON body and its number in the body. */
export interface Line {
  line: number
  text: string
}

/** One row of an import's body: where it stands, and how to read it as a create's body (throws AppError). */
export interface SourceRow {
  /** 1-based: the line of an NDJSON or CSV body, the feature's number in a GeoJSON, KML or GPX body. */
  line: number
  /** 0-based position among the features of a GeoJSON, KML or GPX body. */
  feature?: number
  read(): Record<string, unknown>
}

/** A body read into rows (at most `importLimits.records`), with what its reader reports beside refusals. */
export interface ImportSource {
  rows: SourceRow[]
  truncated: boolean
  unknownProperties?: UnknownProperties[]
}

/**
 * The non-empty lines of an NDJSON body, numbered from 1 as they stand in the body (blank lines count, so
 * a number points into the file sent), at most `limit` of them; `truncated` when more non-empty lines follow.
 */
export function ndjsonLines(body: string, limit: number): { lines: Line[]; truncated: boolean } {
  const lines: Line[] = []
  let start = body.charCodeAt(0) === 0xfeff ? 1 : 0
  for (let number = 1; start <= body.length; number++) {
    let end = body.indexOf('\n', start)
    if (end === -1) end = body.length
    const text = body.slice(start, end).trim()
    start = end + 1
    if (text === '') continue
    if (lines.length === limit) return { lines, truncated: true }
    lines.push({ line: number, text })
  }
  return { lines, truncated: false }
}

/**
 * What identifies a chunk within its job: the SHA-256 of its body and locale, so the same request sent
 * again (a retry after a timeout or a crash) is recognised without the client doing anything.
 */
export function chunkKey(body: string, locale: string | undefined): string {
  return createHash('sha256')
    .update(`${locale ?? ''}\n`)
    .update(body)
    .digest('hex')
}

/** One line as a JSON object. Throws invalid_request. */
export function parseLine(text: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new AppError('invalid_request', 'The line is not valid JSON')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new AppError('invalid_request', 'Each line must be a JSON object')
  return value as Record<string, unknown>
}
