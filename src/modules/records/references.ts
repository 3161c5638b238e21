import { AppError } from '../../lib/errors.js'
import { usersTarget, type FieldDef } from '../collections/index.js'
import type { Opened } from './context.js'
import type { ApiRecord } from './events.js'
import type { Row } from './store.js'

// Relation values must name records that exist, and file values files the writer may read: every write
// path (create, update, each line of an import) asks here, after the blocking hooks, with the values it is
// about to store.

/** At most this many missing ids are named in a refusal (details.missingCount gives how many there are). */
export const missingIdsShown = 20

/** One write's relation and file values. */
export interface ReferenceWrite {
  /** Columns as the write stores them (writeValue's output); only the relation and file fields present are checked. */
  row: Row
  /** The record before an update: ids it already held are not checked again (nor refused if gone since). */
  before?: ApiRecord
}

export interface MissingReferences {
  /** `relation`: records of the target that do not exist; `file`: files the writer may not read. */
  kind: 'relation' | 'file'
  field: string
  missing: string[]
}

/** The ids a relation or file value holds: one id (belongsTo, file), or a list (hasMany; written as JSON text, read as an array). */
function idsIn(def: FieldDef, value: unknown): string[] {
  if (value === null || value === undefined) return []
  if (def.type !== 'relation' || def.relationConfig?.relationType !== 'hasMany')
    return typeof value === 'string' ? [value] : []
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
 * For each write, the first field naming ids it may not store, with those ids; null where every id passes.
 * A relation's ids must be active records of the target collection (not missing, not soft-deleted), asked
 * whatever the caller may read there; a record may point at itself (a create's own id counts as existing in
 * its own collection). A file field's id must be a file the writer may read, as GET /files/:id would show
 * it: a missing file, another project's and a private one of someone else are refused alike, so the answer
 * tells nothing about files the writer cannot see. One lookup per field for all the writes together.
 */
export async function missingReferences(
  opened: Opened,
  writes: readonly ReferenceWrite[],
): Promise<(MissingReferences | null)[]> {
  const out: (MissingReferences | null)[] = writes.map(() => null)
  for (const def of opened.shape.stored) {
    if (def.type === 'file') {
      await refuseUnreadableFiles(opened, def, writes, out)
      continue
    }
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
    const active = await existingIds(opened, config.targetCollection, distinct)
    wanted.forEach((ids, i) => {
      const missing = ids.filter((id) => !active.has(id))
      if (missing.length > 0) out[i] = { kind: 'relation', field: def.name, missing }
    })
  }
  return out
}

/**
 * Which of these ids name what the relation may point at: active records of the target collection, or, for
 * a relation to users (decision 061), users of the project (one of another project is as absent as none).
 */
async function existingIds(opened: Opened, target: string, ids: readonly string[]): Promise<ReadonlySet<string>> {
  const projectId = opened.collection.projectId
  if (target === usersTarget) return new Set((await opened.users.members(projectId, ids)).keys())
  const store = await opened.targets.storeOf(projectId, target)
  return store ? store.activeIds(ids) : new Set<string>()
}

/** Marks the writes whose value of this file field names a file the writer may not read. */
async function refuseUnreadableFiles(
  opened: Opened,
  def: FieldDef,
  writes: readonly ReferenceWrite[],
  out: (MissingReferences | null)[],
): Promise<void> {
  const wanted = writes.map((write, i) => (out[i] || !(def.name in write.row) ? [] : addedIds(def, write)))
  const distinct = [...new Set(wanted.flat())]
  if (distinct.length === 0) return
  const readable = await opened.readableFiles(opened.principal, distinct)
  wanted.forEach((ids, i) => {
    const missing = ids.filter((id) => !readable.has(id))
    if (missing.length > 0) out[i] = { kind: 'file', field: def.name, missing }
  })
}

/**
 * The refusal of a write whose relation field names records that do not exist, or whose file field names a
 * file the writer may not read: 422 validation_error. A file refusal names only the field, in the same
 * words whatever the reason, so it is the same answer for every id that is not readable.
 */
export function missingReferencesError(opened: Opened, { kind, field, missing }: MissingReferences): AppError {
  if (kind === 'file') return new AppError('validation_error', `"${field}" must name a file you may read`, { field })
  const target = opened.shape.byName.get(field)?.relationConfig?.targetCollection ?? 'its target'
  const what = missing.length === 1 ? 'a record' : `${missing.length} records`
  const message =
    target === usersTarget
      ? `"${field}" names ${missing.length === 1 ? 'an id that is not a user' : `${missing.length} ids that are not users`} of this project`
      : `"${field}" names ${what} of ${target} that do not exist`
  return new AppError('validation_error', message, {
    field,
    missing: missing.slice(0, missingIdsShown),
    ...(missing.length > missingIdsShown ? { missingCount: missing.length } : {}),
  })
}

/** Refuses one write whose relation values name records that do not exist, or file values files the writer may not read. Throws validation_error. */
export async function assertReferencesExist(opened: Opened, write: ReferenceWrite): Promise<void> {
  const [missing] = await missingReferences(opened, [write])
  if (missing) throw missingReferencesError(opened, missing)
}
