import { AppError } from '../../lib/errors.js'
import type { FieldDef } from '../collections/index.js'
import type { Opened } from './context.js'
import type { ApiRecord } from './events.js'
import type { Row } from './store.js'

// Relation values must name records that exist: every write path (create, update, each line of an import)
// asks here, after the blocking hooks, with the values it is about to store.

/** At most this many missing ids are named in a refusal (details.missingCount gives how many there are). */
export const missingIdsShown = 20

/** One write's relation values. */
export interface ReferenceWrite {
  /** Columns as the write stores them (writeValue's output); only the relation fields present are checked. */
  row: Row
  /** The record before an update: ids it already held are not checked again (nor refused if gone since). */
  before?: ApiRecord
}

export interface MissingReferences {
  field: string
  missing: string[]
}

/** The ids a relation value holds: one id (belongsTo), or a list (hasMany; written as JSON text, read as an array). */
function idsIn(def: FieldDef, value: unknown): string[] {
  if (value === null || value === undefined) return []
  if (def.relationConfig?.relationType !== 'hasMany') return typeof value === 'string' ? [value] : []
  const list: unknown = typeof value === 'string' ? JSON.parse(value) : value
  return Array.isArray(list) ? list.filter((id): id is string => typeof id === 'string') : []
}

/** The ids a write adds to a relation field: those it stores, less those the record held already. */
function addedIds(def: FieldDef, write: ReferenceWrite): string[] {
  const ids = idsIn(def, write.row[def.name])
  if (!write.before) return ids
  const held = new Set(idsIn(def, write.before[def.name]))
  return ids.filter((id) => !held.has(id))
}

/**
 * For each write, the first relation field naming ids that are no active record of the target collection
 * (missing, or soft-deleted), with those ids; null where every id exists. The target is asked whatever the
 * caller may read there, in one query per relation field for all the writes together. A record may point
 * at itself: a create's own id counts as existing in its own collection.
 */
export async function missingReferences(opened: Opened, writes: readonly ReferenceWrite[]): Promise<(MissingReferences | null)[]> {
  const out: (MissingReferences | null)[] = writes.map(() => null)
  for (const def of opened.shape.stored) {
    const config = def.relationConfig
    if (def.type !== 'relation' || !config) continue
    const self = config.targetCollection === opened.collection.name
    const wanted = writes.map((write, i) => {
      if (out[i] || !(def.name in write.row)) return []
      const ids = addedIds(def, write)
      return self ? ids.filter((id) => id !== write.row.id) : ids
    })
    const distinct = [...new Set(wanted.flat())]
    if (distinct.length === 0) continue
    const target = await opened.targets.storeOf(opened.collection.projectId, config.targetCollection)
    const active = target ? await target.activeIds(distinct) : new Set<string>()
    wanted.forEach((ids, i) => {
      const missing = ids.filter((id) => !active.has(id))
      if (missing.length > 0) out[i] = { field: def.name, missing }
    })
  }
  return out
}

/** The refusal of a write whose relation field names records that do not exist: 422 validation_error. */
export function missingReferencesError(opened: Opened, { field, missing }: MissingReferences): AppError {
  const target = opened.shape.byName.get(field)?.relationConfig?.targetCollection ?? 'its target'
  const what = missing.length === 1 ? 'a record' : `${missing.length} records`
  return new AppError('validation_error', `"${field}" names ${what} of ${target} that do not exist`, {
    field,
    missing: missing.slice(0, missingIdsShown),
    ...(missing.length > missingIdsShown ? { missingCount: missing.length } : {}),
  })
}

/** Refuses one write whose relation values name records that do not exist. Throws validation_error. */
export async function assertReferencesExist(opened: Opened, write: ReferenceWrite): Promise<void> {
  const [missing] = await missingReferences(opened, [write])
  if (missing) throw missingReferencesError(opened, missing)
}
