import { AppError } from '../../../lib/errors.js'
import type { Collection } from '../collection.js'
import type { ChangePlan } from '../changes/index.js'
import {
  collectionReferences,
  indexReferences,
  renamedInOthers,
  type FieldReference,
  type FieldReferenceQuery,
} from '../references.js'
import type { CollectionsContext } from './context.js'

/** A renamed field with what names it: `updated` is rewritten by the rename, `kept` is left as it is. */
export interface RenameReport {
  readonly from: string
  readonly to: string
  readonly updated: FieldReference[]
  readonly kept: FieldReference[]
}

/** Every reference to one field: other collections, the kept compound indexes, and other modules' (decision 062). */
async function referencesTo(
  ctx: CollectionsContext,
  all: ReadonlyMap<string, Collection>,
  query: FieldReferenceQuery,
  indexes: readonly Collection['indexes'][number][],
): Promise<FieldReference[]> {
  const found = [
    ...indexReferences(indexes, query.field),
    ...collectionReferences(all.values(), query.collection, query.field),
  ]
  await ctx.deps.findFieldReferences?.(query, found)
  return found
}

/**
 * Refuses to drop a field anything still names (409 conflict listing them, at most 50): a grant's field
 * list or row filter, a relation's display field, a lookup or rollup, a compound index left in the list, a
 * search index, a lens or a flow. Nothing has been written when it throws.
 */
export async function checkDrops(
  ctx: CollectionsContext,
  all: ReadonlyMap<string, Collection>,
  collection: Collection,
  plan: ChangePlan,
  keptIndexes: readonly Collection['indexes'][number][],
): Promise<void> {
  const blocked: { field: string; dependents: FieldReference[] }[] = []
  for (const def of plan.dropped) {
    const query = {
      projectId: collection.projectId,
      collection: collection.name,
      field: def.name,
      purpose: 'drop' as const,
    }
    const dependents = await referencesTo(ctx, all, query, keptIndexes)
    if (dependents.length > 0) blocked.push({ field: def.name, dependents: dependents.slice(0, 50) })
  }
  if (blocked.length === 0) return
  const first = blocked[0]!
  throw new AppError(
    'conflict',
    `Field "${first.field}" is still used by ${first.dependents.map((d) => `${d.kind} ${d.name}`).join('; ')}; change or remove those first; nothing was changed`,
    { fields: blocked },
  )
}

/** What each rename will rewrite and what it will leave (reported), found before anything is written. */
export async function planRenameReports(
  ctx: CollectionsContext,
  all: ReadonlyMap<string, Collection>,
  collection: Collection,
  plan: ChangePlan,
): Promise<RenameReport[]> {
  const reports: RenameReport[] = []
  for (const { from, to } of plan.renamed) {
    const query = {
      projectId: collection.projectId,
      collection: collection.name,
      field: from.name,
      purpose: 'rename' as const,
    }
    // The collection's own compound indexes follow the rename through the index list itself.
    const found = await referencesTo(ctx, all, query, [])
    reports.push({
      from: from.name,
      to: to.name,
      updated: found.filter((r) => r.updatable),
      kept: found.filter((r) => !r.updatable),
    })
  }
  return reports
}

/**
 * After the table's rename committed: other collections' definitions that name the field are rewritten
 * (their schemaVersion goes up), then other modules rewrite theirs. Those are writes to the system
 * database after the table's transaction, so a failure there is logged and the rename stands.
 */
export async function applyRenames(
  ctx: CollectionsContext,
  all: ReadonlyMap<string, Collection>,
  collection: Collection,
  plan: ChangePlan,
  now: number,
): Promise<void> {
  // Folded over the renames: a collection naming two renamed fields is written once, with both.
  const others = new Map([...all].filter(([name]) => name !== collection.name))
  const touched = new Set<string>()
  for (const { from, to } of plan.renamed) {
    for (const other of renamedInOthers(others.values(), collection.name, from.name, to.name)) {
      others.set(other.collection.name, { ...other.collection, fields: other.fields })
      touched.add(other.collection.name)
    }
  }
  for (const name of touched) {
    const before = all.get(name)!
    await ctx.store.update(before.id, {
      fields: JSON.stringify(others.get(name)!.fields),
      schema_version: before.schemaVersion + 1,
      updated_at: now,
    })
  }
  for (const { from, to } of plan.renamed) {
    const query = {
      projectId: collection.projectId,
      collection: collection.name,
      field: from.name,
      purpose: 'rename' as const,
    }
    await ctx.deps
      .onFieldRenamed?.(query, to.name)
      .catch((err: unknown) =>
        ctx.deps.log.error({ err, ...query, to: to.name }, 'rewriting references to a renamed field failed'),
      )
  }
}
