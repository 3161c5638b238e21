import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { layoutOf, type Collection } from '../collection.js'
import { alterCollectionTable, changesIndexes, type TableChange } from '../ddl.js'
import { changeKinds, fieldRows, planChanges, type ChangeRequest } from '../changes/index.js'
import { normaliseFields, normaliseIndexes } from '../definition/index.js'
import { collectionUpdateEvent } from '../events.js'
import type { CollectionsContext } from './context.js'
import { parseAccessControl } from './inputs.js'

/**
 * Replaces the field list (additions, and the changes of existing fields that changes/registry.ts lists,
 * rows rewritten in the table's transaction) and optionally the
 * compound indexes (the complete list: those left out are dropped, new ones made) and the access control. `name`, `storageType` and `databaseId` may come along (a client sending back what it read)
 * only with their current values: renaming or moving a collection is not supported. schemaVersion goes
 * up by one. Throws collection_not_found, invalid_field, invalid_request, already_exists (a new unique
 * index the rows break), ddl_error, conflict (rows a change cannot take, e.g. records holding a removed enum value), and
 * whatever the field-change hook refuses with (conflict).
 */
export async function updateCollection(
  ctx: CollectionsContext,
  actor: Principal,
  name: string,
  input: {
    fields: unknown
    indexes?: unknown
    accessControl?: unknown
    name?: string
    storageType?: string
    databaseId?: string
    enumChanges?: ChangeRequest['enumChanges']
  },
): Promise<Collection> {
  await ctx.deps.access.authorize(actor, 'schema/*:update')
  const projectId = actor.projectId
  const collection = await ctx.require(projectId, name)
  for (const key of ['name', 'storageType', 'databaseId'] as const) {
    const sent = input[key]
    if (sent === undefined || sent === collection[key]) continue
    throw new AppError(
      'invalid_request',
      `${key} is "${collection[key]}": renaming or moving a collection is not supported`,
      {
        property: key,
        current: collection[key],
      },
    )
  }
  const fields = normaliseFields(input.fields, { collection: name, collections: await ctx.others(projectId, name) })
  const plan = planChanges(collection.fields, fields, { enumChanges: input.enumChanges ?? {} })
  const indexes = input.indexes === undefined ? collection.indexes : normaliseIndexes(input.indexes, name, fields)
  const before = new Set(collection.indexes.map((i) => i.name))
  const after = new Set(indexes.map((i) => i.name))
  const change: TableChange = {
    added: plan.added,
    indexToggled: plan.indexToggled,
    indexesDropped: collection.indexes.filter((i) => !after.has(i.name)),
    indexesAdded: indexes.filter((i) => !before.has(i.name)),
  }
  const accessControl =
    input.accessControl === undefined ? collection.accessControl : parseAccessControl(input.accessControl)
  await ctx.deps.fieldChanges?.before(collection, fields)
  const handle = await ctx.handleOf(collection, 'write')
  const now = ctx.deps.clock.seconds()
  const request = { enumChanges: input.enumChanges ?? {} }
  const rewriteRows = async (scoped: typeof handle) => {
    const rows = fieldRows(scoped, name, layoutOf(collection), fields, now)
    for (const each of plan.changes)
      await changeKinds.find((k) => k.kind === each.kind)?.apply?.(each, { rows, request })
  }
  await ctx.ddl(
    () => alterCollectionTable(handle, name, collection.fields, fields, change, layoutOf(collection), rewriteRows),
    change.indexesAdded.filter((i) => i.unique),
  )
  if (changesIndexes(change)) await ctx.refreshed(handle, name)
  // Every instance reads the new columns from the published file: it is published before the answer.
  if (collection.storageType === 'r2_sql') await ctx.deps.r2Sql.publish(collection)
  await ctx.store.update(collection.id, {
    fields: JSON.stringify(fields),
    indexes: indexes.length > 0 ? JSON.stringify(indexes) : null,
    access_control: accessControl ? JSON.stringify(accessControl) : null,
    schema_version: collection.schemaVersion + 1,
    owner_scoped: collection.ownerScoped || accessControl?.preset === 'private',
    updated_at: now,
  })
  await ctx.changed(projectId)
  await ctx.deps.fieldChanges?.after(collection, fields)
  await ctx.deps.audit.record({
    projectId,
    action: 'collection.updated',
    actor,
    target: { type: 'collection', id: collection.id },
    details: {
      name,
      added: change.added.map((f) => f.name),
      indexToggled: change.indexToggled.map((f) => f.name),
      // Each change of an existing field with the field before and after it (enum values, labels, …).
      changes: plan.changes.map((c) => ({ kind: c.kind, field: c.field, before: c.before, after: c.after })),
      ...(Object.keys(request.enumChanges).length > 0 ? { enumChanges: request.enumChanges } : {}),
      indexesAdded: change.indexesAdded.map((i) => i.name),
      indexesDropped: change.indexesDropped.map((i) => i.name),
    },
  })
  ctx.deps.events?.emit(
    'collection.update',
    collectionUpdateEvent({
      actor,
      collection,
      schemaVersion: collection.schemaVersion + 1,
      change,
      fieldChanges: plan.changes,
      request,
      at: now,
    }),
  )
  return {
    ...collection,
    fields,
    indexes,
    accessControl,
    schemaVersion: collection.schemaVersion + 1,
    ownerScoped: collection.ownerScoped || accessControl?.preset === 'private',
    updatedAt: now,
  }
}
