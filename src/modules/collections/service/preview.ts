import { isAppError, type AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { layoutOf } from '../collection.js'
import { changeKinds, fieldRows, type FieldRows } from '../changes/index.js'
import { alterCollectionTable } from '../ddl.js'
import type { FieldDef } from '../field-types/index.js'
import type { CollectionsContext } from './context.js'
import type { RenameReport } from './field-references.js'
import { checkPlannedDrops, planUpdate, type UpdateInput } from './update-plan.js'

/**
 * One change a PATCH would make: `added`, `renamed` (with what it rewrites and what it leaves, as the PATCH's
 * meta.renames), `dropped` (with how many records hold a value it loses), or a change of an existing field
 * by kind (enumValues, required, …) with its definition before and after and the rows it rewrites.
 */
export interface PreviewChange {
  kind: string
  field: string
  from?: string
  updated?: RenameReport['updated']
  kept?: RenameReport['kept']
  valuesLost?: number
  before?: FieldDef | null
  after?: FieldDef
  rowsRewritten?: number
}

/** What a PATCH with the same body would do; nothing of it is written. */
export interface ChangePreview {
  /** Whether the PATCH would be accepted now (the rows and references as they are). */
  accepted: boolean
  /** The schema version the PATCH would produce (from the current one). */
  schemaVersion: { from: number; to: number }
  /** The collection's records, soft-deleted ones too (a change checks them all). */
  records: number
  changes: PreviewChange[]
  indexesAdded: string[]
  indexesDropped: string[]
  /** The error the PATCH would answer (409 conflict or already_exists), or null. */
  refusal: { status: number; error: string; message: string; details: Record<string, unknown> } | null
}

/** Thrown inside the change's transaction once every change ran: the database undoes all of it. */
class RolledBack extends Error {}

/** Rows read through a count of what the change writes (rows rewritten, nulls filled). */
function counted(rows: FieldRows, add: (n: number) => void): FieldRows {
  return {
    ...rows,
    async write(def, updates) {
      add(updates.length)
      await rows.write(def, updates)
    },
    async fillNull(def, value) {
      add(await rows.countNull(def))
      await rows.fillNull(def, value)
    },
  }
}

/**
 * POST /collections/:name/changes/preview: the PATCH's own plan and checks, then its table change and row
 * rewrites inside a transaction that is rolled back (both databases undo DDL), so what it reports is what
 * the PATCH would meet, counted on the same rows. It takes the table's write lock for as long as the change
 * would. A request the PATCH would answer 400, 403 or 404 is answered the same; a refusal the rows or
 * references make (409) is reported in `refusal` with 200.
 */
export async function previewChanges(
  ctx: CollectionsContext,
  actor: Principal,
  name: string,
  input: UpdateInput,
): Promise<ChangePreview> {
  const planned = await planUpdate(ctx, actor, name, input)
  const { collection, fields, plan, change, request } = planned
  const handle = await ctx.handleOf(collection, 'write')
  const now = ctx.deps.clock.seconds()
  const before = fieldRows(handle, name, layoutOf(collection), collection.fields, now)
  const records = await countRecords(handle, name)
  const rewritten = new Map<number, number>()
  const preview: ChangePreview = {
    accepted: true,
    schemaVersion: { from: collection.schemaVersion, to: collection.schemaVersion + 1 },
    records,
    changes: [
      ...change.added.map((f) => ({ kind: 'added', field: f.name })),
      ...planned.renames.map((r) => ({ kind: 'renamed', field: r.to, from: r.from, updated: r.updated, kept: r.kept })),
      ...(await Promise.all(
        plan.dropped.map(async (d) => ({
          kind: 'dropped',
          field: d.name,
          valuesLost: fieldTypeHasColumn(d) ? records - (await before.countNull(d)) : 0,
        })),
      )),
    ],
    indexesAdded: change.indexesAdded.map((i) => i.name),
    indexesDropped: change.indexesDropped.map((i) => i.name),
    refusal: null,
  }
  try {
    await checkPlannedDrops(ctx, planned)
    await ctx.deps.fieldChanges?.before(collection, fields)
    await ctx.ddl(async () => {
      try {
        await alterCollectionTable(
          handle,
          name,
          collection.fields,
          fields,
          change,
          layoutOf(collection),
          async (scoped) => {
            const rows = fieldRows(scoped, name, layoutOf(collection), fields, now)
            for (const [at, each] of plan.changes.entries()) {
              const kind = changeKinds.find((k) => k.kind === each.kind)
              await kind?.apply?.(each, {
                rows: counted(rows, (n) => rewritten.set(at, (rewritten.get(at) ?? 0) + n)),
                request,
              })
            }
            throw new RolledBack()
          },
        )
      } catch (err) {
        if (!(err instanceof RolledBack)) throw err
      }
    })
  } catch (err) {
    if (!isAppError(err) || (err.status !== 409 && err.code !== 'already_exists')) throw err
    preview.accepted = false
    preview.refusal = refusalOf(err)
  }
  preview.changes.push(
    ...plan.changes.map((c, at) => ({
      kind: c.kind,
      field: c.field,
      before: c.before,
      after: c.after,
      rowsRewritten: rewritten.get(at) ?? 0,
    })),
  )
  return preview
}

function refusalOf(err: AppError): NonNullable<ChangePreview['refusal']> {
  return { status: err.status, error: err.code, message: err.message, details: err.details }
}

function fieldTypeHasColumn(def: FieldDef): boolean {
  return def.type !== 'lookup' && def.type !== 'rollup'
}

async function countRecords(handle: Awaited<ReturnType<CollectionsContext['handleOf']>>, table: string) {
  const row = await handle.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}
