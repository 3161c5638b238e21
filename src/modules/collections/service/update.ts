import type { Principal } from '../../../lib/principal.js'
import { layoutOf, type Collection } from '../collection.js'
import { alterCollectionTable, changesIndexes } from '../ddl.js'
import { changeKinds, fieldRows } from '../changes/index.js'
import { collectionUpdateEvent } from '../events.js'
import type { CollectionsContext } from './context.js'
import { applyRenames, type RenameReport } from './field-references.js'
import { checkPlannedDrops, planUpdate, type UpdateInput } from './update-plan.js'

export interface UpdateResult {
  readonly collection: Collection
  /** Per renamed field, the references rewritten and those left as they were (decision 062). */
  readonly renames: RenameReport[]
}

/**
 * Replaces the field list (additions, renames and drops, and the changes of existing fields that
 * changes/registry.ts lists, rows rewritten in the table's transaction) and optionally the compound indexes
 * (the complete list: those left out are dropped, new ones made) and the access control. `name`,
 * `storageType` and `databaseId` may come along (a client sending back what it read) only with their
 * current values. schemaVersion goes up by one. Throws collection_not_found, invalid_field,
 * invalid_request, already_exists (a new unique index the rows break), ddl_error, conflict (rows a change
 * cannot take, or a dropped field something still names), and whatever the field-change hook refuses with.
 */
export async function updateCollection(
  ctx: CollectionsContext,
  actor: Principal,
  name: string,
  input: UpdateInput,
): Promise<UpdateResult> {
  const planned = await planUpdate(ctx, actor, name, input)
  await checkPlannedDrops(ctx, planned)
  const { collection, fields, indexes, accessControl, plan, change, request } = planned
  const projectId = actor.projectId
  await ctx.deps.fieldChanges?.before(collection, fields)
  const handle = await ctx.handleOf(collection, 'write')
  const now = ctx.deps.clock.seconds()
  const rewriteRows = async (scoped: typeof handle) => {
    const rows = fieldRows(scoped, name, layoutOf(collection), fields, now, indexes)
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
  await applyRenames(ctx, planned.all, collection, plan, now)
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
      ...(planned.renames.length > 0 ? { renamed: planned.renames } : {}),
      ...(plan.dropped.length > 0 ? { dropped: plan.dropped } : {}),
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
    collection: {
      ...collection,
      fields,
      indexes,
      accessControl,
      schemaVersion: collection.schemaVersion + 1,
      ownerScoped: collection.ownerScoped || accessControl?.preset === 'private',
      updatedAt: now,
    },
    renames: planned.renames,
  }
}
