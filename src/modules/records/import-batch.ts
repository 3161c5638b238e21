import { sql, type Kysely } from 'kysely'
import { AppError, isAppError } from '../../lib/errors.js'
import { fieldTypeOf } from '../collections/index.js'
import type { BulkInserter } from './bulk-insert.js'
import { isJsonField } from './codec.js'
import type { Opened } from './context.js'
import type { ImportLineError } from './import-jobs.js'
import { missingReferences, missingReferencesError } from './references.js'
import type { Row } from './store.js'

// The checks an import makes over its whole batch of rows (one query per field, not per row) and the
// batch's write; each refusal is reported on its line, never thrown.

/** A line that passed validation: the row to store. */
export interface Candidate {
  line: number
  feature?: number | undefined
  row: Row
  /** The caller chose the id (only those are checked against the table before the insert). */
  chosenId: boolean
}

const featureOf = (c: { feature?: number | undefined }) => (c.feature === undefined ? {} : { feature: c.feature })

/** A refused line (or feature); an error that is not the client's (5xx, or not an AppError) is thrown on. */
export function lineError(line: number, err: unknown, feature?: number): ImportLineError {
  if (!isAppError(err) || err.status >= 500) throw err
  const { field, fields } = err.details as { field?: unknown; fields?: unknown }
  const named =
    typeof field === 'string'
      ? field
      : Array.isArray(fields) && fields.length === 1 && typeof fields[0] === 'string'
        ? fields[0]
        : undefined
  return {
    line,
    ...(feature === undefined ? {} : { feature }),
    code: err.code,
    message: err.message,
    ...(named === undefined ? {} : { field: named }),
  }
}

/** A value as a set key; numbers by value, since a driver may hand a number column back as text (numeric). */
function valueKey(value: unknown, numeric: boolean): string {
  return numeric ? `n:${Number(value)}` : `s:${String(value)}`
}

/**
 * Refuses lines whose unique values (a chosen id, a unique scalar field) a stored record holds already,
 * soft-deleted ones included, or an earlier line of the batch holds: already_exists, as a create would.
 * JSON and translatable unique fields are left to the database (see the one-by-one fallback).
 */
export async function refuseTaken(
  opened: Opened,
  inserter: BulkInserter,
  candidates: Candidate[],
  errors: ImportLineError[],
): Promise<Candidate[]> {
  const columns = [
    ...(candidates.some((c) => c.chosenId) ? [{ column: 'id', numeric: false }] : []),
    ...opened.shape.stored
      .filter((d) => d.unique && !d.translatable && !isJsonField(d))
      .map((d) => ({
        column: d.name,
        numeric: ['integer', 'number', 'boolean'].includes(fieldTypeOf(d.type).valueKind(d)),
      })),
  ]
  if (columns.length === 0) return candidates
  const refused = new Map<Candidate, string>()
  for (const { column, numeric } of columns) {
    const holders = candidates.filter((c) => c.row[column] !== null && (column !== 'id' || c.chosenId))
    if (holders.length === 0) continue
    const values = [...new Set(holders.map((c) => c.row[column]))]
    const taken = new Set((await inserter.taken(opened.handle.db, column, values)).map((v) => valueKey(v, numeric)))
    const seen = new Set<string>()
    for (const candidate of holders) {
      const key = valueKey(candidate.row[column], numeric)
      if ((taken.has(key) || seen.has(key)) && !refused.has(candidate)) refused.set(candidate, column)
      seen.add(key)
    }
  }
  for (const [candidate, column] of refused) {
    errors.push({
      line: candidate.line,
      ...featureOf(candidate),
      code: 'already_exists',
      message: `A record with this ${column} already exists`,
      field: column,
    })
  }
  return candidates.filter((c) => !refused.has(c))
}

/**
 * Refuses lines whose relation values name records that do not exist, or whose file values files the
 * caller may not read (validation_error, as a create would), checked for the whole batch in one query per field. A line may not point at a record
 * another line of the same request creates: that one could still be refused.
 */
export async function refuseMissingReferences(
  opened: Opened,
  candidates: Candidate[],
  errors: ImportLineError[],
): Promise<Candidate[]> {
  const missing = await missingReferences(
    opened,
    candidates.map((c) => ({ row: c.row })),
  )
  const kept: Candidate[] = []
  candidates.forEach((candidate, i) => {
    const refusal = missing[i]
    if (refusal) errors.push(lineError(candidate.line, missingReferencesError(opened, refusal), candidate.feature))
    else kept.push(candidate)
  })
  return kept
}

/**
 * Stores the rows inside the caller's transaction. When the database refuses one (a race), the batch is
 * undone to its savepoint and written again one row at a time, so only the refused rows fail.
 */
export async function writeRows(
  trx: Kysely<any>,
  inserter: BulkInserter,
  candidates: Candidate[],
  errors: ImportLineError[],
): Promise<Row[]> {
  if (candidates.length === 0) return []
  const columns = Object.keys(candidates[0]!.row)
  const rows = candidates.map((c) => c.row)
  await sql`savepoint plinth_import_batch`.execute(trx)
  try {
    const stored = await inserter.insert(trx, columns, rows)
    await sql`release savepoint plinth_import_batch`.execute(trx)
    return stored
  } catch (err) {
    if (!isAppError(err) || err.status >= 500) throw err
    await sql`rollback to savepoint plinth_import_batch`.execute(trx)
    await sql`release savepoint plinth_import_batch`.execute(trx)
  }
  // Something the checks could not see (another writer took a unique value meanwhile, a JSON unique
  // field): each row in its own savepoint, so one refusal leaves the others in.
  const outcomes = await inserter.insertEach(trx, columns, rows)
  const stored: Row[] = []
  outcomes.forEach((outcome, i) => {
    if (outcome instanceof AppError) errors.push(lineError(candidates[i]!.line, outcome, candidates[i]!.feature))
    else stored.push(outcome)
  })
  return stored
}
