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
import { createCollectionTable, currentIndexLayout } from '../ddl.js'
import { checkCollectionName, normaliseFields, normaliseIndexes } from '../definition/index.js'
import type { CollectionRow } from '../store.js'
import type { CollectionsContext } from './context.js'
import { databaseFor, parseAccessControl } from './inputs.js'

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
  // database is made only once its name is taken, below.
  const own = storageType === 'durable_object'
  const file = storageType === 'r2_sql'
  const bound = own || file ? null : await ctx.deps.registry.get(projectId, databaseId)
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
  try {
    await ctx.store.insert(row)
  } catch (err) {
    if (isAppError(err) && err.code === 'already_exists')
      throw new AppError('already_exists', `A collection named "${name}" already exists`, { name })
    throw err
  }
  try {
    const layout = layoutOf({ storageType })
    if (file)
      await ctx.ddl(() =>
        ctx.deps.r2Sql.create({ projectId, id }, (handle) =>
          createCollectionTable(handle, name, fields, indexes, layout),
        ),
      )
    else
      await ctx.ddl(async () =>
        createCollectionTable(
          bound ?? (await ctx.deps.registry.createOwn(projectId, databaseId)),
          name,
          fields,
          indexes,
          layout,
        ),
      )
  } catch (err) {
    // Nothing half-made remains: the registration goes, and so does a database made for it.
    if (own)
      await ctx.deps.registry
        .dropOwn(projectId, databaseId)
        .catch((e: unknown) =>
          ctx.deps.log.error({ err: e, projectId, databaseId }, 'removing a failed collection database failed'),
        )
    if (file)
      await ctx.deps.r2Sql
        .drop({ projectId, id })
        .catch((e: unknown) =>
          ctx.deps.log.error({ err: e, projectId, collectionId: id }, 'removing a failed r2_sql collection failed'),
        )
    await ctx.store.delete(row.id)
    throw err
  }
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
