import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  queryFlag,
  z,
  type Security,
} from '../../lib/http/index.js'
import { bulkDeleteLimit, type BulkDelete } from './bulk.js'
import type { Publish } from './publish.js'
import type { Transfer } from './transfer.js'
import type { Truncate } from './truncate.js'

const tags = ['Records']
const Params = z.object({ name: z.string().min(1).max(100) })
const IdParams = Params.extend({ id: z.string().min(1).max(64) })
const errors = ['invalid_request', 'unauthorized', 'forbidden', 'collection_not_found'] as const

const bulkDelete = defineRoute({
  method: 'delete',
  path: '/api/v1/collections/{name}/records/bulk',
  operationId: 'records.bulkDelete',
  summary: 'Delete up to 200 records by id (soft by default)',
  tags,
  permission: 'collections/{name}:delete',
  request: {
    params: Params,
    query: z.object({
      permanent: queryFlag
        .optional()
        .openapi({ description: 'Remove the records (soft-deleted ones too) instead of soft-deleting them' }),
    }),
    ...jsonBody(
      z.object({
        ids: z
          .array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'each id is 1-64 letters, digits, - or _'))
          .min(1, 'send at least one id')
          .max(bulkDeleteLimit, `at most ${bulkDeleteLimit} ids per bulk delete`),
      }),
    ),
  },
  responses: {
    200: jsonContent(
      z.object({
        deleted: z
          .number()
          .int()
          .openapi({ description: 'Records deleted; ids not deletable by the caller are not counted' }),
      }),
      'Deleted',
    ),
    ...errorResponses(...errors, 'conflict'),
  },
})

const transfer = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/records/{id}/transfer',
  operationId: 'records.transfer',
  summary: 'Transfer a record to another person (owner, or a transfer grant)',
  tags,
  permission: 'collections/{name}:transfer',
  request: {
    params: IdParams,
    ...jsonBody(
      z.object({
        userId: z.string().max(64).optional(),
        userEmail: z.string().max(254).optional(),
        keepAccess: z
          .boolean()
          .optional()
          .openapi({ description: 'Leave the previous owner an edit share (default true; only where sharing is on)' }),
      }),
    ),
  },
  responses: {
    200: jsonContent(
      z.object({
        success: z.literal(true),
        changed: z.boolean(),
        owner: z.string(),
        previousOwner: z.string().nullable(),
        previousOwnerKeptAccess: z.boolean(),
      }),
      'Transferred (changed false when the record already belonged to that person)',
    ),
    ...errorResponses(...errors, 'record_not_found', 'not_found', 'conflict'),
  },
})

const truncate = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/truncate',
  operationId: 'collections.truncate',
  summary: 'Delete every record, soft-deleted ones included; the schema stays',
  tags: ['Collections'],
  permission: 'collections/{name}:hard_delete',
  request: { params: Params },
  responses: {
    200: jsonContent(
      z.object({ success: z.literal(true), deleted: z.number().int(), staleSearchIndexes: z.array(z.string()) }),
      'Truncated',
    ),
    ...errorResponses(...errors, 'conflict'),
  },
})

const publish = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/publish',
  operationId: 'collections.publish',
  summary: 'Publish an r2_sql collection: its unpublished writes go to object storage, and every instance reads them',
  tags: ['Collections'],
  // The service decides: create, update or delete on the collection's records, any of them.
  permission: 'collections/{name}:update',
  description:
    'Allowed to whoever may create, update or delete records of the collection. Answers the version now published (published false when nothing new was written). See docs/collections.md "r2_sql".',
  request: { params: Params },
  responses: {
    200: jsonContent(
      z.object({
        published: z.boolean(),
        version: z.number().int(),
        sizeBytes: z.number().int(),
        publishedAt: z.number().int(),
      }),
      'The last published version of the file',
    ),
    ...errorResponses(...errors, 'conflict', 'service_unavailable'),
  },
})

/**
 * Bulk delete, transfer and truncate (`/records/bulk` is not taken for a record id: the HTTP layer puts
 * static segments before parameters, http/route-order.ts). Bulk delete and transfer decide in the service (presets, shares, ownership); truncate's
 * guard checks hard_delete first.
 */
export function recordDataRoutes(
  tools: { bulk: BulkDelete; transfer: Transfer; truncate: Truncate; publish: Publish },
  security: Security,
  readSecurity: Security,
) {
  const router = createRouter(readSecurity)
  router.openapi(bulkDelete, async (c) => {
    const permanent = c.req.valid('query').permanent ?? false
    const deleted = await tools.bulk.delete(
      principalOf(c),
      c.req.valid('param').name,
      c.req.valid('json').ids,
      permanent,
    )
    return c.json({ deleted }, 200)
  })
  router.openapi(transfer, async (c) => {
    const { name, id } = c.req.valid('param')
    return c.json(await tools.transfer.transfer(principalOf(c), name, id, c.req.valid('json')), 200)
  })
  router.openapi(publish, async (c) =>
    c.json(await tools.publish.publish(principalOf(c), c.req.valid('param').name), 200),
  )
  const guarded = createRouter(security)
  guarded.openapi(truncate, async (c) =>
    c.json(await tools.truncate.truncate(principalOf(c), c.req.valid('param').name), 200),
  )
  return [router, guarded]
}
