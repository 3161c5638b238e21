import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  queryInteger,
  z,
  type Security,
} from '../../lib/http/index.js'
import { CreateLensAttachmentSchema, LensAttachmentSchema, UpdateLensAttachmentSchema } from './schemas.js'
import type { LensAttachmentsService } from './service.js'

const tags = ['Lens attachments']
const resource = 'system/lens-attachments'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: LensAttachmentSchema })

const listAttachments = defineRoute({
  method: 'get',
  path: '/api/v1/lens-attachments',
  operationId: 'lensAttachments.list',
  summary: 'Lens attachments of the project (optionally of one collection)',
  tags,
  permission: `${resource}:read`,
  request: {
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
      collection: z.string().min(1).max(100).optional(),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(LensAttachmentSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of lens attachments',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getAttachment = defineRoute({
  method: 'get',
  path: '/api/v1/lens-attachments/{id}',
  operationId: 'lensAttachments.get',
  summary: 'One lens attachment',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The attachment'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createAttachment = defineRoute({
  method: 'post',
  path: '/api/v1/lens-attachments',
  operationId: 'lensAttachments.create',
  summary: 'Offer a lens of this project on a collection’s records or list',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateLensAttachmentSchema),
  responses: {
    201: jsonContent(One, 'Attached'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const updateAttachment = defineRoute({
  method: 'patch',
  path: '/api/v1/lens-attachments/{id}',
  operationId: 'lensAttachments.update',
  summary: 'Change an attachment’s label or placement',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(UpdateLensAttachmentSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const deleteAttachment = defineRoute({
  method: 'delete',
  path: '/api/v1/lens-attachments/{id}',
  operationId: 'lensAttachments.delete',
  summary: 'Detach (the lens itself is untouched)',
  tags,
  permission: `${resource}:delete`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})

/** /api/v1/lens-attachments (decision 065). */
export function lensAttachmentsRoutes(attachments: LensAttachmentsService, security: Security) {
  const router = createRouter(security)
  router.openapi(listAttachments, async (c) => {
    const { page, limit, collection } = c.req.valid('query')
    const { data, total } = await attachments.list(principalOf(c), page, limit, collection)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(getAttachment, async (c) =>
    c.json({ data: await attachments.get(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(createAttachment, async (c) =>
    c.json({ data: await attachments.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(updateAttachment, async (c) =>
    c.json({ data: await attachments.update(principalOf(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  )
  router.openapi(deleteAttachment, async (c) => {
    await attachments.delete(principalOf(c), c.req.valid('param').id)
    return c.body(null, 204)
  })
  return router
}
