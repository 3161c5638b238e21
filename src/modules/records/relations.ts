import { AppError } from '../../lib/errors.js'
import type { Collection, FieldDef } from '../collections/index.js'
import { fieldTypeOf } from '../collections/index.js'
import { fieldResolver, readValue, shapeOf, writeValue, type CollectionShape } from './codec.js'
import type { RecordsDeps } from './context.js'
import type { ApiRecord } from './events.js'
import { sameValue, type Committed, type WriteIntent } from './pipeline.js'
import { fullRecord } from './present.js'
import { storeOf } from './context.js'
import type { RecordStore, Row } from './store.js'

interface Table {
  collection: Collection
  shape: CollectionShape
  store: RecordStore
  /** On an r2_sql collection's working copy (claimed), not the copy read. */
  writable?: boolean
}

interface Reference extends Table {
  field: FieldDef
  rows: Row[]
}

/** A record the cascade deletes (onDelete cascade), as read when planned. */
export interface PlannedDelete extends Table {
  row: Row
}

/** A record that loses references to deleted records (set-null, hasMany clean-up), as read when planned. */
export interface PlannedUpdate extends Table {
  row: Row
  /** belongsTo fields set to null. */
  nulls: Set<string>
  /** hasMany fields and the deleted ids they lose. */
  lists: Map<string, Set<string>>
}

/** Everything a delete causes, found before anything is hooked or written. */
export interface CascadePlan {
  deletes: PlannedDelete[]
  updates: PlannedUpdate[]
}

const maxDepth = 5
// A referencing record that keeps changing while its references are cleared: the delete is refused (409).
const maxAttempts = 5

const keyOf = (collection: string, id: unknown) => `${collection}\u0000${String(id)}`

/** Every relation field of the project that points at `target`, with the rows that hold `id` (soft-deleted ones too on request). */
async function referencesTo(
  deps: Pick<RecordsDeps, 'collections'>,
  tables: Map<string, Table>,
  projectId: string,
  target: string,
  id: string,
  includeDeleted: boolean,
): Promise<Reference[]> {
  const found: Reference[] = []
  for (const collection of await deps.collections.list(projectId)) {
    const fields = collection.fields.filter(
      (f) => f.type === 'relation' && f.relationConfig?.targetCollection === target,
    )
    if (fields.length === 0) continue
    let table = tables.get(collection.name)
    if (!table) {
      const handle = await deps.collections.handleOf(collection)
      const shape = shapeOf(collection, handle.kind)
      table = { collection, shape, store: storeOf(collection, handle, fieldResolver(shape, 'en')) }
      tables.set(collection.name, table)
    }
    for (const field of fields) {
      let rows = await table.store.referencing(
        field.name,
        id,
        field.relationConfig!.relationType === 'hasMany',
        includeDeleted,
      )
      if (rows.length > 0 && collection.storageType === 'r2_sql' && !table.writable) {
        // Found in the copy read; what the delete plans is written to the working copy (decision 036).
        const handle = await deps.collections.handleOf(collection, 'write')
        table = { ...table, writable: true, store: storeOf(collection, handle, fieldResolver(table.shape, 'en')) }
        tables.set(collection.name, table)
        rows = await table.store.referencing(
          field.name,
          id,
          field.relationConfig!.relationType === 'hasMany',
          includeDeleted,
        )
      }
      if (rows.length > 0) found.push({ ...table, field, rows })
    }
  }
  return found
}

/**
 * Plans the `onDelete` of every relation pointing at records about to be deleted (the roots, of one
 * collection), through the whole cascade, before anything is hooked or written. `restrict` refuses (409)
 * while any active record still points at one of them, soft or permanent delete alike. On a permanent
 * delete, `set-null` clears belongsTo references (a required one counts as restrict), `cascade` deletes
 * the records that belong to it, and a hasMany list simply loses the id. A soft delete leaves references
 * as they are (the record can be restored). A permanent delete reaches soft-deleted referencing records
 * too, since they can be restored: otherwise a restored record would point at a record that no longer
 * exists (or, under cascade, outlive its parent). Only active records restrict. Each referencing record
 * is planned once, however many of the deleted records it points at: one delete, or one update clearing
 * every such reference.
 *
 * These are the schema's rules, as a foreign key's are (docs/permissions.md, decision 011): they apply
 * whatever the caller's row rules on the referencing collections, since the caller may delete the record
 * and whoever wrote a referencing record chose to point it at this one. Every write they cause is the
 * caller's: hooked and published with the caller as principal (the files of a cascaded record go only
 * when the caller could delete them itself). Throws conflict.
 */
export async function planCascade(
  deps: Pick<RecordsDeps, 'collections'>,
  root: Pick<Collection, 'name' | 'projectId'>,
  ids: readonly string[],
  permanent: boolean,
): Promise<CascadePlan> {
  const tables = new Map<string, Table>()
  const deleting = new Set(ids.map((id) => keyOf(root.name, id)))
  const deletes: PlannedDelete[] = []
  const touched = new Map<string, PlannedUpdate>()
  // The roots are records of a collection, or the project's users (`users`, decision 061).
  let level: { collection: Pick<Collection, 'name' | 'projectId'>; id: string }[] = ids.map((id) => ({
    collection: root,
    id,
  }))
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > maxDepth)
      throw new AppError('conflict', 'The delete would cascade too deep; delete the dependent records first')
    const next: typeof level = []
    for (const { collection, id } of level) {
      for (const ref of await referencesTo(deps, tables, collection.projectId, collection.name, id, permanent)) {
        const config = ref.field.relationConfig!
        const many = config.relationType === 'hasMany'
        const restrict =
          config.onDelete === 'restrict' || (!many && config.onDelete === 'set-null' && ref.field.required)
        if (restrict) {
          const active = ref.rows.filter((row) => row.deleted_at === null || row.deleted_at === undefined).length
          if (active === 0) continue
          throw new AppError(
            'conflict',
            `${active} record(s) of ${ref.collection.name} still reference this record (${ref.field.name})`,
            { collection: ref.collection.name, field: ref.field.name, count: active },
          )
        }
        if (!permanent) continue
        for (const row of ref.rows) {
          const key = keyOf(ref.collection.name, row.id)
          if (!many && config.onDelete === 'cascade') {
            if (deleting.has(key)) continue
            deleting.add(key)
            deletes.push({ collection: ref.collection, shape: ref.shape, store: ref.store, row })
            next.push({ collection: ref.collection, id: String(row.id) })
            continue
          }
          let update = touched.get(key)
          if (!update)
            touched.set(
              key,
              (update = {
                collection: ref.collection,
                shape: ref.shape,
                store: ref.store,
                row,
                nulls: new Set(),
                lists: new Map(),
              }),
            )
          if (many) {
            const lost = update.lists.get(ref.field.name) ?? new Set<string>()
            update.lists.set(ref.field.name, lost.add(id))
          } else {
            update.nulls.add(ref.field.name)
          }
        }
      }
    }
    level = next
  }
  // A record the cascade deletes needs no clean-up.
  const updates = [...touched].filter(([key]) => !deleting.has(key)).map(([, update]) => update)
  return { deletes, updates }
}

/** What the clean-up writes on a referencing record as it is now (API values): nulls, and lists without the deleted ids. */
function cleanUp(update: PlannedUpdate, row: Row): ApiRecord {
  const data: ApiRecord = {}
  for (const field of update.nulls) data[field] = null
  for (const [field, lost] of update.lists) {
    const ids = readValue(update.shape.byName.get(field)!, row[field], update.shape.kind) as string[] | null
    data[field] = (ids ?? []).filter((x) => !lost.has(x))
  }
  return data
}

/** The hook intents of a plan, in the order `applyCascade` takes their data: the updates, then the deletes. */
export function cascadeIntents(plan: CascadePlan): WriteIntent[] {
  return [
    ...plan.updates.map(
      (u): WriteIntent => ({
        action: 'update',
        collection: u.collection,
        before: fullRecord(u.shape, u.row),
        data: cleanUp(u, u.row),
      }),
    ),
    ...plan.deletes.map(
      (d): WriteIntent => ({
        action: 'delete',
        collection: d.collection,
        before: fullRecord(d.shape, d.row),
        data: {},
      }),
    ),
  ]
}

/** The stored values of a clean-up's data (a hook may have changed it). Throws invalid_field. */
function storedValues(shape: CollectionShape, data: ApiRecord): Row {
  const set: Row = {}
  for (const [key, value] of Object.entries(data)) {
    const def = shape.byName.get(key)
    if (!def || fieldTypeOf(def.type).computed)
      throw new AppError('invalid_field', `Unknown or computed field "${key.slice(0, 60)}" in a hook's data`, {
        field: key.slice(0, 60),
      })
    set[key] = writeValue(def, value)
  }
  return set
}

/**
 * Writes a planned cascade with the hooks' data (`data`: one per intent of `cascadeIntents`), and answers
 * what committed. Each clean-up is written at the version it was read at; when the record changed
 * meanwhile, the clean-up is recomputed on the record as it is now and written again without the hooks
 * (decision 021): a hook's own changes are kept as they were. Records gone meanwhile are skipped.
 * Throws invalid_field (a hook's data), conflict (a record that keeps changing).
 */
export async function applyCascade(plan: CascadePlan, data: readonly ApiRecord[], now: number): Promise<Committed[]> {
  const committed: Committed[] = []
  // Every hook's data is checked before the first write.
  const hooked = plan.updates.map((update, i) => ({
    update,
    planned: cleanUp(update, update.row),
    data: data[i]!,
    set: storedValues(update.shape, data[i]!),
  }))
  for (const { update, planned, data: hookData, set: firstSet } of hooked) {
    let row: Row | undefined = update.row
    let set = firstSet
    for (let attempt = 0; row; attempt++) {
      if (attempt >= maxAttempts)
        throw new AppError(
          'conflict',
          `A record of ${update.collection.name} kept changing while its references were cleared; retry`,
        )
      const written = await update.store.update(
        String(row.id),
        { ...set, updated_at: now },
        null,
        Number(row._version),
        true,
      )
      if (written) {
        committed.push({
          type: 'record.update',
          collection: update.collection,
          before: fullRecord(update.shape, row),
          after: fullRecord(update.shape, written),
        })
        break
      }
      row = await update.store.byId(String(update.row.id), null, true)
      if (!row) break
      const again = cleanUp(update, row)
      const next: ApiRecord = { ...hookData }
      for (const key of Object.keys(planned))
        if (key in hookData && sameValue(hookData[key], planned[key])) next[key] = again[key]
      set = storedValues(update.shape, next)
    }
  }
  // Deepest first: a record goes after those that belong to it.
  for (const doomed of [...plan.deletes].reverse()) {
    const removed = await doomed.store.remove(String(doomed.row.id), null)
    if (removed)
      committed.push({
        type: 'record.delete',
        collection: doomed.collection,
        before: fullRecord(doomed.shape, removed),
        permanent: true,
      })
  }
  return committed
}
