import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { Collection } from '../collection.js'
import { planChanges, type ChangePlan, type ChangeRequest } from '../changes/index.js'
import type { TableChange } from '../ddl.js'
import {
  indexColumn,
  normaliseFields,
  normaliseIndexes,
  type AccessControl,
  type CompoundIndex,
} from '../definition/index.js'
import type { FieldDef } from '../field-types/index.js'
import { renameIndexSpecs, renameOwnReferences } from '../references.js'
import type { CollectionsContext } from './context.js'
import { checkDrops, planRenameReports, type RenameReport } from './field-references.js'
import { parseAccessControl } from './inputs.js'

/** The PATCH body (and the preview's) as the service takes it. */
export interface UpdateInput {
  /** Absent: the fields as they are (a PATCH of the access config or the indexes alone). */
  fields?: unknown
  indexes?: unknown
  accessControl?: unknown
  name?: string
  storageType?: string
  databaseId?: string
  enumChanges?: ChangeRequest['enumChanges']
  renames?: Readonly<Record<string, string>>
  drop?: readonly string[]
}

/** A PATCH with everything decided that can be without touching rows: the preview and the PATCH share it. */
export interface PlannedUpdate {
  readonly collection: Collection
  readonly all: ReadonlyMap<string, Collection>
  readonly fields: FieldDef[]
  readonly indexes: readonly CompoundIndex[]
  readonly accessControl: AccessControl
  readonly request: ChangeRequest
  readonly plan: ChangePlan
  readonly change: TableChange
  readonly renames: RenameReport[]
  readonly keptIndexes: readonly CompoundIndex[]
}

/**
 * Checks a PATCH against the definition: the caller's right (`schema/*:update`), the unchangeable
 * properties, the new field list and indexes, each change's kind and request check, and what names a
 * dropped field (409). Throws before anything is written.
 */
export async function planUpdate(
  ctx: CollectionsContext,
  actor: Principal,
  name: string,
  input: UpdateInput,
): Promise<PlannedUpdate> {
  await ctx.deps.access.authorize(actor, 'schema/*:update')
  const projectId = actor.projectId
  const collection = await ctx.require(projectId, name)
  for (const key of ['name', 'storageType', 'databaseId'] as const) {
    const sent = input[key]
    if (sent === undefined || sent === collection[key]) continue
    throw new AppError(
      'invalid_request',
      `${key} is "${collection[key]}": renaming or moving a collection is not supported`,
      { property: key, current: collection[key] },
    )
  }
  const renames = input.renames ?? {}
  if (input.fields === undefined && (Object.keys(renames).length > 0 || (input.drop?.length ?? 0) > 0))
    throw new AppError('invalid_request', 'renames and drop need fields: the complete new field list', {
      property: 'fields',
    })
  const request: ChangeRequest = { enumChanges: input.enumChanges ?? {}, renames, drop: input.drop ?? [] }
  const fields = normaliseFields(renameOwnReferences(input.fields ?? collection.fields, renames), {
    collection: name,
    collections: await ctx.others(projectId, name),
  })
  const plan = planChanges(collection.fields, fields, request)
  const all = await ctx.load(projectId)
  const indexes = indexesAfter(collection, input.indexes, renames, fields)
  const before = new Set(collection.indexes.map((i) => i.name))
  const after = new Set(indexes.map((i) => i.name))
  const change: TableChange = {
    added: plan.added,
    indexToggled: plan.indexToggled,
    indexesDropped: collection.indexes.filter((i) => !after.has(i.name)),
    indexesAdded: indexes.filter((i) => !before.has(i.name)),
    renamed: plan.renamed,
    dropped: plan.dropped,
  }
  const accessControl =
    input.accessControl === undefined ? collection.accessControl : parseAccessControl(input.accessControl)
  const reports = await planRenameReports(ctx, all, collection, plan)
  // A stored index kept while its field is dropped is one of the field's dependents (checkPlannedDrops).
  const keptIndexes = input.indexes === undefined ? collection.indexes : []
  return { collection, all, fields, indexes, accessControl, request, plan, change, renames: reports, keptIndexes }
}

/** Refuses (409) a planned drop of a field something still names; see checkDrops. */
export function checkPlannedDrops(ctx: CollectionsContext, planned: PlannedUpdate): Promise<void> {
  return checkDrops(ctx, planned.all, planned.collection, planned.plan, planned.keptIndexes)
}

/**
 * The compound indexes after the PATCH: as sent, or the stored ones; either way a renamed field is named
 * by its new name (an index's name derives from its fields, so such an index is dropped and made again).
 */
function indexesAfter(
  collection: Collection,
  sent: unknown,
  renames: Readonly<Record<string, string>>,
  fields: readonly FieldDef[],
): readonly CompoundIndex[] {
  if (sent !== undefined) return normaliseIndexes(renameIndexSpecs(sent, renames), collection.name, fields)
  const touched = collection.indexes.some((i) => i.fields.some((spec) => renames[indexColumn(spec).field]))
  if (!touched) return collection.indexes
  return normaliseIndexes(renameIndexSpecs(collection.indexes, renames), collection.name, fields)
}
