import { evaluateFilter, type ResolvedFilterNode } from '../../lib/filter/index.js'
import { localise } from './codec.js'
import type { Opened } from './context.js'
import type { ApiRecord } from './events.js'
import { shows } from './present.js'

/**
 * A record in API form (as events carry it: every stored field, translatable fields as their whole locale
 * map) as the opened caller reads it: only the columns its allowlist lets through, translatable fields in
 * the opened locale. The same columns, in the same order, as `present` gives for a read of the stored row.
 */
export function presentRecord(opened: Opened, record: ApiRecord): ApiRecord {
  const view = { locale: opened.locale, projection: null, allowlist: opened.scope.fields }
  const out: ApiRecord = {}
  for (const column of [
    'id',
    'created_at',
    'updated_at',
    'created_by',
    'updated_by',
    'deleted_at',
    '_version',
  ] as const) {
    if (shows(column, view)) out[column] = record[column] ?? null
  }
  if (opened.shape.collection.ownerScoped && shows('owned_by', view)) out.owned_by = record.owned_by ?? null
  for (const def of opened.shape.stored) {
    if (!shows(def.name, view)) continue
    const value = record[def.name] ?? null
    out[def.name] = def.translatable ? localise(value, opened.locale) : value
  }
  return out
}

/**
 * Whether a record in API form is one the opened caller reaches: not soft-deleted, inside the scope's row
 * filter, and inside `extra` (a request's own filter) when given. Filters compare a translatable field in
 * the opened locale, as the SQL they compile to does. Throws nothing.
 */
export function recordVisible(opened: Opened, record: ApiRecord, extra: ResolvedFilterNode | null = null): boolean {
  if (record.deleted_at !== null && record.deleted_at !== undefined) return false
  if (!opened.scope.rows && !extra) return true
  const compared = comparable(opened, record)
  if (opened.scope.rows && !evaluateFilter(opened.scope.rows, compared)) return false
  return !extra || evaluateFilter(extra, compared)
}

/** The record with each translatable field as its value in the opened locale (what filters compare). */
function comparable(opened: Opened, record: ApiRecord): ApiRecord {
  if (opened.locale === '*') return record
  let out: ApiRecord | null = null
  for (const def of opened.shape.stored) {
    if (!def.translatable || !(def.name in record)) continue
    out ??= { ...record }
    out[def.name] = localise(record[def.name], opened.locale)
  }
  return out ?? record
}
