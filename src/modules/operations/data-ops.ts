import { z } from 'zod'
import { isAppError } from '../../lib/errors.js'
import { checkFilterBounds } from '../../lib/filter/index.js'
import type { AggregateSpec, BulkDelete, RecordsService } from '../records/index.js'
import { numeric, text } from './schema-helpers.js'
import { StepError, type OperationContext } from './types.js'
import { throughService } from './service-call.js'

/**
 * The data operations (crud_*): what they share. Each goes through the records service as the run's
 * principal, so row and column rules, presets, hooks and events are exactly those of the API; a refusal
 * is a typed step error carrying the API's code and status (decision 031).
 */

/** What the data operations need of `ctx.services` (app.ts wires them). */
export interface DataServices {
  readonly records: Pick<RecordsService, 'create' | 'update' | 'delete' | 'find' | 'matchingIds' | 'aggregate'>
  readonly dataTools: { readonly bulk: Pick<BulkDelete, 'delete'> }
}

/** How many records one step may create, update or delete (a write by ids or filter touching more is refused whole). */
export const maxWriteRecords = 1000
/** Ids per bulk delete call (the records API's own bound). */
const bulkDeleteChunk = 200

export const collectionField = () => text(100, 1).describe("The collection's name")
/**
 * A step's filter: the records API's bounds (lib/filter checkFilterBounds: 8 levels, 16 KiB, …) are a
 * schema issue, so saving a flow refuses it (422 naming the step and config.filter) and a run whose
 * templates resolve to one fails the step with invalid_config, before anything writes it back to text.
 */
export const filterField = () =>
  z
    .union([z.record(z.string(), z.unknown()), z.array(z.unknown()).max(1000)])
    .superRefine(withinFilterBounds)
    .describe(
      "A filter in the object or array format of the records API (values may be templates; $CURRENT_USER is the run's user)",
    )

function withinFilterBounds(filter: unknown, ctx: z.RefinementCtx): void {
  try {
    checkFilterBounds(filter, 'filter')
  } catch (err) {
    if (!isAppError(err)) throw err
    ctx.addIssue({ code: 'custom', message: err.message })
  }
}
export const sortField = () =>
  z
    .array(z.strictObject({ field: z.string().min(1).max(200), order: z.enum(['asc', 'desc']).default('asc') }))
    .max(10)
    .describe('Sort keys, each { field, order: asc | desc }')
export const fieldsField = (what: string) => z.array(z.string().min(1).max(100)).max(200).describe(what)
export const idField = () => text(64, 1).describe("One record's id")
export const idsField = () =>
  z
    .array(z.union([z.string().min(1).max(64), z.number()]))
    .min(1)
    .max(maxWriteRecords)
    .describe(`Record ids (at most ${maxWriteRecords})`)
export const offsetField = () =>
  numeric(z.number().int().min(0).max(1_000_000_000)).default(0).describe('Records to skip')
export const groupByField = () => z.array(z.string().min(1).max(100)).max(5).describe('Fields to group by (at most 5)')
export const aggregateField = () =>
  z
    .array(
      z.strictObject({
        fn: z.enum(['count', 'sum', 'avg', 'min', 'max']),
        field: z
          .string()
          .min(1)
          .max(100)
          .optional()
          .describe('The field; count without one (or with *) counts records'),
        as: z.string().min(1).max(64).optional().describe('The result key (default count, or <fn>_<field>)'),
      }),
    )
    .max(20)
    .describe('Functions per group: { fn: count | sum | avg | min | max, field, as }')
export const permanentField = () => z.boolean().default(false).describe('Delete for good instead of soft-deleting')
export const limitField = (max: number, fallback: number) =>
  numeric(z.number().int().min(1).max(max)).default(fallback).describe(`At most this many (1-${max})`)

/** Where a write by id, ids or filter lands: exactly one of them. */
export function oneTarget(config: { id?: unknown; ids?: unknown; filter?: unknown }, ctx: z.RefinementCtx): void {
  const given = (['id', 'ids', 'filter'] as const).filter((key) => config[key] !== undefined)
  if (given.length !== 1)
    ctx.addIssue({
      code: 'custom',
      path: given.length === 0 ? ['id'] : [given[1]!],
      message: 'Give exactly one of id, ids or filter',
    })
}

export type Filter = Record<string, unknown> | unknown[]
export type Sort = readonly { field: string; order: 'asc' | 'desc' }[]

export function servicesOf(ctx: OperationContext): DataServices {
  return ctx.services
}

/**
 * Runs a records-service call as throughService does; done here, not left to the engine, so an item's place
 * can be added to the message.
 */
export const throughRecords = throughService

const filterText = (filter: Filter | undefined): string | undefined =>
  filter === undefined ? undefined : JSON.stringify(filter)

/** Creates one record or each of a list, in order. Output `{ record }` for one, `{ records, count }` for a list. */
export async function createRecords(
  ctx: OperationContext,
  collection: string,
  data: Record<string, unknown> | readonly Record<string, unknown>[],
) {
  const { records } = servicesOf(ctx)
  if (!Array.isArray(data))
    return {
      record: await throughRecords(() => records.create(ctx.principal, collection, data as Record<string, unknown>)),
    }
  const created: unknown[] = []
  for (const [index, item] of data.entries()) {
    try {
      created.push(await throughRecords(() => records.create(ctx.principal, collection, item)))
    } catch (err) {
      // The records before it stay created (each is its own write, hooks and events included): say which.
      if (err instanceof StepError)
        throw new StepError(
          err.code,
          `data[${index}]: ${err.message}`,
          { ...err.details, index, created: created.length },
          err.statusCode,
          err.retryable,
        )
      throw err
    }
  }
  return { records: created, count: created.length }
}

export interface ReadConfig {
  readonly filter?: Filter
  readonly sort?: Sort
  readonly limit: number
  readonly offset: number
  readonly fields?: readonly string[]
}

/** Records as the run's principal may read them. Output `{ records, count, hasMore }`. */
export async function readRecords(ctx: OperationContext, collection: string, config: ReadConfig) {
  const { records } = servicesOf(ctx)
  const page = await throughRecords(() =>
    records.find(ctx.principal, collection, {
      filter: filterText(config.filter),
      sort: config.sort,
      limit: config.limit,
      offset: config.offset,
      fields: config.fields,
    }),
  )
  return { records: page.data, count: page.data.length, hasMore: page.hasMore }
}

export interface Target {
  readonly id?: string
  readonly ids?: readonly (string | number)[]
  readonly filter?: Filter
}

/**
 * The ids a write by id, ids or filter touches, all of them checked before anything is written: an id the
 * caller may not read and act on (missing, hidden, outside its row rules) fails the step as record_not_found.
 */
async function targetIds(
  ctx: OperationContext,
  collection: string,
  action: 'update' | 'delete',
  target: Target,
): Promise<string[]> {
  if (target.id !== undefined) return [target.id]
  const { records } = servicesOf(ctx)
  const ids = target.ids?.map(String)
  const found = await throughRecords(() =>
    records.matchingIds(ctx.principal, collection, action, { filter: filterText(target.filter), ids }, maxWriteRecords),
  )
  if (ids) {
    const missing = new Set(ids)
    for (const id of found) missing.delete(id)
    if (missing.size > 0)
      throw new StepError(
        'record_not_found',
        `${missing.size} of the ids name no record you may ${action}; nothing was written`,
        { missing: missing.size },
        404,
        false,
      )
  }
  return found
}

/** Updates the targeted records with `data` (fields and JSON operators, as PATCH). Output `{ records, count }`. */
export async function updateRecords(
  ctx: OperationContext,
  collection: string,
  data: Record<string, unknown>,
  target: Target,
) {
  const { records } = servicesOf(ctx)
  const ids = await targetIds(ctx, collection, 'update', target)
  const updated: unknown[] = []
  for (const id of ids)
    updated.push(await throughRecords(() => records.update(ctx.principal, collection, id, data, null)))
  return { records: updated, count: updated.length }
}

/** Deletes the targeted records (soft unless `permanent`). Output `{ ids, count }`. */
export async function deleteRecords(ctx: OperationContext, collection: string, target: Target, permanent: boolean) {
  const services = servicesOf(ctx)
  if (target.id !== undefined) {
    const id = target.id
    await throughRecords(() => services.records.delete(ctx.principal, collection, id, permanent))
    return { ids: [id], count: 1 }
  }
  const ids = await targetIds(ctx, collection, 'delete', target)
  let count = 0
  for (let i = 0; i < ids.length; i += bulkDeleteChunk) {
    const chunk = ids.slice(i, i + bulkDeleteChunk)
    count += await throughRecords(() => services.dataTools.bulk.delete(ctx.principal, collection, chunk, permanent))
  }
  return { ids, count }
}

export interface QueryConfig {
  readonly select?: readonly string[]
  readonly filter?: Filter
  readonly groupBy?: readonly string[]
  readonly aggregate?: readonly { fn: AggregateSpec['fn']; field?: string; as?: string }[]
  readonly sort?: Sort
  readonly limit: number
}

/**
 * With groupBy or aggregate: one row per group (the selected group fields, then the aggregate values),
 * compiled to one SELECT. Without: the records, `select` choosing their fields. Output `{ rows, count, hasMore }`.
 */
export async function queryRecords(ctx: OperationContext, collection: string, config: QueryConfig) {
  const { records } = servicesOf(ctx)
  const groupBy = config.groupBy ?? []
  const aggregate = config.aggregate ?? []
  if (groupBy.length === 0 && aggregate.length === 0) {
    const page = await readRecords(ctx, collection, {
      filter: config.filter,
      sort: config.sort,
      limit: config.limit,
      offset: 0,
      fields: config.select,
    })
    return { rows: page.records, count: page.count, hasMore: page.hasMore }
  }
  const outside = (config.select ?? []).filter((name) => !groupBy.includes(name))
  if (outside.length > 0)
    throw new StepError(
      'invalid_request',
      `select: ${outside.join(', ')} is not a groupBy field (a grouped query answers its groups and aggregates)`,
      {},
      400,
      false,
    )
  const specs: AggregateSpec[] = aggregate.map(({ fn, field, as }) => ({
    fn,
    ...(field === undefined || field === '*' ? {} : { field }),
    ...(as === undefined ? {} : { as }),
  }))
  const result = await throughRecords(() =>
    records.aggregate(ctx.principal, collection, {
      filter: filterText(config.filter),
      groupBy,
      aggregate: specs,
      sort: config.sort,
      limit: config.limit,
    }),
  )
  const hidden = config.select ? groupBy.filter((name) => !config.select!.includes(name)) : []
  const rows =
    hidden.length === 0
      ? result.data
      : result.data.map((row) => Object.fromEntries(Object.entries(row).filter(([key]) => !hidden.includes(key))))
  return { rows, count: rows.length, hasMore: result.hasMore }
}
