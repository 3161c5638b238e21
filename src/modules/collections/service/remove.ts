import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { layoutOf, type Collection } from '../collection.js'
import { dropCollectionTable } from '../ddl.js'
import type { CollectionsContext } from './context.js'

/** Drops the table and all its data, then the registry entry. Throws collection_not_found, conflict (referenced), ddl_error. */
export async function deleteCollection(ctx: CollectionsContext, actor: Principal, name: string): Promise<void> {
  await ctx.deps.access.authorize(actor, 'schema/*:delete')
  const projectId = actor.projectId
  const collection = await ctx.require(projectId, name)
  // A relation pointing here would be left dangling and its collection could not be patched again.
  const referencing = [...(await ctx.load(projectId)).values()].flatMap((c) =>
    c.name === name
      ? []
      : c.fields.filter((f) => f.relationConfig?.targetCollection === name).map((f) => `${c.name}.${f.name}`),
  )
  if (referencing.length > 0) {
    throw new AppError(
      'conflict',
      `Relations still point at ${name}: ${referencing.join(', ')}; remove those collections first`,
      { referencing },
    )
  }
  // A collection's own database goes whole (file or schema); elsewhere only its table is dropped.
  if (collection.storageType === 'durable_object')
    await ctx.ddl(() => ctx.deps.registry.dropOwn(projectId, collection.databaseId))
  else if (collection.storageType === 'r2_sql') await ctx.ddl(() => ctx.deps.r2Sql.drop(collection))
  else await ctx.ddl(async () => dropCollectionTable(await ctx.handleOf(collection), name, layoutOf(collection)))
  await ctx.store.delete(collection.id)
  await ctx.changed(projectId)
  await ctx.deps.audit.record({
    projectId,
    action: 'collection.deleted',
    actor,
    target: { type: 'collection', id: collection.id },
    details: { name },
  })
  await ctx.removed(actor, projectId, [name])
}

/**
 * Removes collections from the registry without touching their tables, because their database binding
 * is going away (DELETE /databases/:id with cascade). The shares of their records go with them (a
 * foreign key). Refused, before anything is removed, while a collection outside the set has a relation
 * to one inside. Throws conflict.
 */
export async function forgetCollections(
  ctx: CollectionsContext,
  actor: Principal,
  projectId: string,
  names: readonly string[],
): Promise<void> {
  const all = await ctx.load(projectId)
  const leaving = new Set(names)
  const referencing = [...all.values()].flatMap((c) =>
    leaving.has(c.name)
      ? []
      : c.fields
          .filter((f) => f.relationConfig && leaving.has(f.relationConfig.targetCollection))
          .map((f) => `${c.name}.${f.name}`),
  )
  if (referencing.length > 0) {
    throw new AppError(
      'conflict',
      `Relations still point at these collections: ${referencing.join(', ')}; remove those collections first`,
      { referencing },
    )
  }
  const gone = names.map((name) => all.get(name)).filter((c): c is Collection => c !== undefined)
  for (const collection of gone) await ctx.store.delete(collection.id)
  await ctx.changed(projectId)
  for (const collection of gone) {
    await ctx.deps.audit.record({
      projectId,
      action: 'collection.deleted',
      actor,
      target: { type: 'collection', id: collection.id },
      details: { name: collection.name, databaseId: collection.databaseId, tableKept: true },
    })
  }
  await ctx.removed(
    actor,
    projectId,
    gone.map((c) => c.name),
  )
}
