import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { Collection, FieldDef } from '../collections/index.js'
import { fieldResolver, readValue, shapeOf, writeValue } from './codec.js'
import type { Opened, RecordsDeps } from './context.js'
import { fullRecord } from './present.js'
import { createRecordStore, type RecordStore, type Row } from './store.js'

interface Reference {
  collection: Collection
  field: FieldDef
  store: RecordStore
  rows: Row[]
}

const maxDepth = 5

/** Every relation field of the project that points at `target`, with the rows that hold `id` (soft-deleted ones too on request). */
async function referencesTo(deps: RecordsDeps, projectId: string, target: string, id: string, includeDeleted: boolean): Promise<Reference[]> {
  const found: Reference[] = []
  for (const collection of await deps.collections.list(projectId)) {
    const fields = collection.fields.filter((f) => f.type === 'relation' && f.relationConfig?.targetCollection === target)
    if (fields.length === 0) continue
    const handle = await deps.collections.handleOf(collection)
    const store = createRecordStore(handle, collection.name, fieldResolver(shapeOf(collection, handle.kind), 'en'))
    for (const field of fields) {
      const rows = await store.referencing(field.name, id, field.relationConfig!.relationType === 'hasMany', includeDeleted)
      if (rows.length > 0) found.push({ collection, field, store, rows })
    }
  }
  return found
}

/**
 * Applies the `onDelete` of every relation pointing at a record about to be deleted. `restrict` refuses
 * (409) while any active record still points at it, soft or permanent delete alike, and is checked through
 * the whole cascade before anything changes. On a permanent delete, `set-null` clears belongsTo references
 * (a required one counts as restrict), `cascade` deletes the records that belong to it, and a hasMany list
 * simply loses the id. A soft delete leaves references as they are (the record can be restored). A
 * permanent delete reaches soft-deleted referencing records too, since they can be restored: otherwise a
 * restored record would point at a record that no longer exists (or, under cascade, outlive its parent).
 * Only active records restrict.
 *
 * These are the schema's rules, as a foreign key's are (docs/permissions.md, decision 011): they apply
 * whatever the caller's row rules on the referencing collections, since the caller may delete the record
 * and whoever wrote a referencing record chose to point it at this one. Every write they cause is the
 * caller's: its events name the caller as actor, and its record.delete events carry the caller's principal,
 * so the files of a cascaded record go only when the caller could delete them itself.
 */
export async function cascadeDelete(deps: RecordsDeps, opened: Opened, id: string, permanent: boolean): Promise<void> {
  const plan = await planDelete(deps, opened.principal, opened.collection, id, permanent, 0)
  for (const step of plan) await step()
}

async function planDelete(deps: RecordsDeps, principal: Principal, collection: Collection, id: string, permanent: boolean, depth: number): Promise<(() => Promise<void>)[]> {
  if (depth > maxDepth) throw new AppError('conflict', 'The delete would cascade too deep; delete the dependent records first')
  const steps: (() => Promise<void>)[] = []
  for (const ref of await referencesTo(deps, collection.projectId, collection.name, id, permanent)) {
    const config = ref.field.relationConfig!
    const many = config.relationType === 'hasMany'
    const restrict = config.onDelete === 'restrict' || (!many && config.onDelete === 'set-null' && ref.field.required)
    if (restrict) {
      const active = ref.rows.filter((row) => row.deleted_at === null || row.deleted_at === undefined).length
      if (active === 0) continue
      throw new AppError('conflict', `${active} record(s) of ${ref.collection.name} still reference this record (${ref.field.name})`, {
        collection: ref.collection.name,
        field: ref.field.name,
      })
    }
    if (!permanent) continue
    const shape = shapeOf(ref.collection, (await deps.collections.handleOf(ref.collection)).kind)
    for (const row of ref.rows) {
      const refId = String(row.id)
      if (many) {
        const ids = readValue(ref.field, row[ref.field.name], shape.kind) as string[] | null
        const next = (ids ?? []).filter((x) => x !== id)
        steps.push(() => referenceUpdate(deps, principal, ref, shape, row, { [ref.field.name]: writeValue(ref.field, next) }))
      } else if (config.onDelete === 'cascade') {
        steps.push(...(await planDelete(deps, principal, ref.collection, refId, true, depth + 1)))
        steps.push(async () => {
          const removed = await ref.store.remove(refId, null)
          if (removed) emitDelete(deps, principal, ref.collection, fullRecord(shape, removed))
        })
      } else {
        steps.push(() => referenceUpdate(deps, principal, ref, shape, row, { [ref.field.name]: null }))
      }
    }
  }
  return steps
}

/** A referencing record loses the deleted id (set-null, hasMany clean-up), whatever the caller's row rules there. */
async function referenceUpdate(deps: RecordsDeps, principal: Principal, ref: Reference, shape: ReturnType<typeof shapeOf>, row: Row, set: Row): Promise<void> {
  const updated = await ref.store.update(String(row.id), { ...set, updated_at: deps.clock.seconds() }, null, null, true)
  if (!updated) return
  deps.events.emit('record.update', {
    projectId: ref.collection.projectId,
    collection: ref.collection.name,
    before: fullRecord(shape, row),
    after: fullRecord(shape, updated),
    actor: { kind: principal.kind, userId: principal.userId },
    at: deps.clock.seconds(),
  })
}

function emitDelete(deps: RecordsDeps, principal: Principal, collection: Collection, before: Record<string, unknown>): void {
  // Only called for rows a permanent cascade removed (the files module removes their files under the caller's permissions).
  deps.events.emit('record.delete', {
    projectId: collection.projectId,
    collection: collection.name,
    before,
    after: null,
    actor: { kind: principal.kind, userId: principal.userId },
    at: deps.clock.seconds(),
    permanent: true,
    principal,
  })
}
