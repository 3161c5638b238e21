import { sql } from 'kysely'
import { describeTable, MAIN_BINDING, tableIdentifier, withNamedLock, type DbHandle } from '../../../lib/db/index.js'
import { isAppError, AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { Principal } from '../../../lib/principal.js'
import {
  availableStorage,
  layoutOf,
  storageTypes,
  toCollection,
  type Collection,
  type StorageType,
} from '../collection.js'
import { createCollectionTable, currentIndexLayout, dropCollectionTable } from '../ddl.js'
import { checkCollectionName, normaliseFields, normaliseIndexes, type CompoundIndex } from '../definition/index.js'
import type { FieldDef } from '../field-types/index.js'
import type { CollectionRow } from '../store.js'
import type { CollectionsContext } from './context.js'
import { databaseFor, parseAccessControl } from './inputs.js'

const taken = (name: string) => new AppError('already_exists', `A collection named "${name}" already exists`, { name })

/**
 * A table of this name in the project database without a registration is what a create killed between its
 * DDL and its registration left: made a moment before, never written to. It goes; a table with rows is not
 * ours to drop, and the create fails on it as before (ddl_error).
 */
async function clearLeftover(handle: DbHandle, name: string): Promise<void> {
  if ((await describeTable(handle, name)).length === 0) return
  const rows = await sql<{ n: number }>`select count(*) as n from ${tableIdentifier(handle, name)}`.execute(handle.db)
  if (Number(rows.rows[0]?.n ?? 0) === 0) await dropCollectionTable(handle, name)
}

/** Nothing half-made remains after a failed create: its table, or the database made for it. */
async function undo(
  ctx: CollectionsContext,
  made: {
    projectId: string
    id: string
    databaseId: string
    own: boolean
    file: boolean
    /** The table this create made, when it got that far. */
    table: { handle: DbHandle; name: string } | null
  },
): Promise<void> {
  const { projectId, id, databaseId } = made
  const logged = (what: string) => (err: unknown) =>
    ctx.deps.log.error(
      { err, projectId, collectionId: id, databaseId },
      `removing a failed collection's ${what} failed`,
    )
  // An r2_sql registration commits with version 1, before the last local steps: it goes too.
  if (made.file) await ctx.store.delete(id).catch(logged('registration'))
  if (made.own) await ctx.deps.registry.dropOwn(projectId, databaseId).catch(logged('database'))
  else if (made.file) await ctx.deps.r2Sql.drop({ projectId, id }).catch(logged('file'))
  else if (made.table) await dropCollectionTable(made.table.handle, made.table.name).catch(logged('table'))
}

/**
 * The table first, the registration after (decision 077): a registration never exists without its table,
 * so a kill between the two leaves at most an empty, unregistered table, which the next create of that
 * name clears. An r2_sql collection's registration commits with its version 1 (which refers to it). Runs
 * under the lock on the name; on a failure nothing it made remains.
 */
async function makeAndRegister(
  ctx: CollectionsContext,
  row: CollectionRow,
  made: { fields: readonly FieldDef[]; indexes: readonly CompoundIndex[]; bound: DbHandle | null },
): Promise<void> {
  const { project_id: projectId, id, name, database_id: databaseId } = row
  if (await ctx.store.find(projectId, name)) throw taken(name)
  const own = row.storage_type === 'durable_object'
  const file = row.storage_type === 'r2_sql'
  const layout = layoutOf({ storageType: row.storage_type as StorageType })
  const create = (handle: DbHandle) => createCollectionTable(handle, name, made.fields, made.indexes, layout)
  let handle = made.bound
  let tableMade = false
  try {
    if (file) {
      await ctx.ddl(() => ctx.deps.r2Sql.create({ projectId, id }, create, (trx) => ctx.store.insert(row, trx)))
      return
    }
    await ctx.ddl(async () => {
      handle ??= await ctx.deps.registry.createOwn(projectId, databaseId)
      if (databaseId === MAIN_BINDING) await clearLeftover(handle, name)
      await create(handle)
    })
    tableMade = true
    await ctx.store.insert(row)
  } catch (err) {
    const table = tableMade && handle && !own ? { handle, name } : null
    await undo(ctx, { projectId, id, databaseId, own, file, table })
    // The DDL's refusals arrive as ddl_error (ctx.ddl); already_exists is the registration's unique name.
    if (isAppError(err) && err.code === 'already_exists') throw taken(name)
    throw err
  }
}

/**
 * Creates a collection and its table. Throws invalid_name, reserved_name, reserved_field,
 * duplicate_field, invalid_field, invalid_request (storage), not_found (database), already_exists,
 * ddl_error. On a DDL failure the registry entry is removed again: nothing half-made remains.
 */
export async function createCollection(
  ctx: CollectionsContext,
  actor: Principal,
  input: {
    name: unknown
    storageType?: string
    databaseId?: string | null
    fields: unknown
    indexes?: unknown
    accessControl?: unknown
  },
): Promise<Collection> {
  await ctx.deps.access.authorize(actor, 'schema/*:create')
  const projectId = actor.projectId
  const name = checkCollectionName(input.name)
  const storageType = (input.storageType ?? 'd1') as StorageType
  if (!(storageTypes as readonly string[]).includes(storageType)) {
    throw new AppError('invalid_request', `storageType must be one of ${storageTypes.join(', ')}`)
  }
  if (!availableStorage.has(storageType)) {
    throw new AppError(
      'invalid_request',
      `storageType "${storageType}" is not available on this instance yet; use ${[...availableStorage].join(', ')}`,
      { storageType },
    )
  }
  const id = newId()
  const databaseId = databaseFor(storageType, input.databaseId, id)
  const accessControl = parseAccessControl(input.accessControl)
  const fields = normaliseFields(input.fields, { collection: name, collections: await ctx.others(projectId, name) })
  const indexes = normaliseIndexes(input.indexes, name, fields)
  // A registered binding must exist before anything is written (404 otherwise); a collection's own
  // database (named after its id) is made below, under the lock.
  const bound =
    storageType === 'durable_object' || storageType === 'r2_sql'
      ? null
      : await ctx.deps.registry.get(projectId, databaseId)
  const now = ctx.deps.clock.seconds()
  const row: CollectionRow = {
    id,
    project_id: projectId,
    name,
    storage_type: storageType,
    database_id: databaseId,
    schema_version: 1,
    fields: JSON.stringify(fields),
    indexes: indexes.length > 0 ? JSON.stringify(indexes) : null,
    index_layout: currentIndexLayout,
    access_control: accessControl ? JSON.stringify(accessControl) : null,
    owner_scoped: accessControl?.preset === 'private',
    created_at: now,
    updated_at: now,
  }
  // The table is made first and registered after (both under a lock on the name): a registration never
  // exists without its table, so a kill between the two leaves at most an empty, unregistered table,
  // which the next create of that name clears (decision 077).
  // Creates in this process take turns, so one waiting for another instance holds one connection.
  await withNamedLock(
    ctx.deps.systemDb,
    ctx.deps.registry.kind,
    `collection:${projectId}:${name}`,
    () => makeAndRegister(ctx, row, { fields, indexes, bound }),
    'collection-create',
  )
  await ctx.changed(projectId)
  await ctx.deps.audit.record({
    projectId,
    action: 'collection.created',
    actor,
    target: { type: 'collection', id: row.id },
    details: { name, fields: fields.length, indexes: indexes.length },
  })
  return toCollection(row)
}
