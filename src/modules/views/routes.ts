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
import { CreateViewSchema, UpdateViewSchema, ViewRecordsQuerySchema, ViewSchema } from './schemas.js'
import type { ViewsService } from './service.js'

const tags = ['Views']
const resource = 'system/views'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: ViewSchema })
const pageShape = { total: z.number().int(), page: z.number().int(), limit: z.number().int(), hasMore: z.boolean() }

const listViews = defineRoute({
  method: 'get',
  path: '/api/v1/views',
  operationId: 'views.list',
  summary: "The views the caller sees (the project's shared ones and its own), by name",
  tags,
  permission: `${resource}:read`,
  request: {
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
      collection: z.string().min(1).max(100).optional().openapi({ description: "Only this collection's views" }),
    }),
  },
  responses: {
    200: jsonContent(z.object({ data: z.array(ViewSchema), ...pageShape }), 'A page of views'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getView = defineRoute({
  method: 'get',
  path: '/api/v1/views/{id}',
  operationId: 'views.get',
  summary: 'One view',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The view'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createView = defineRoute({
  method: 'post',
  path: '/api/v1/views',
  operationId: 'views.create',
  summary: 'Save a view, personal or (with system/views:update) shared; checked as the caller against the collection',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateViewSchema),
  responses: {
    201: jsonContent(One, 'Saved'),
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
const updateView = defineRoute({
  method: 'patch',
  path: '/api/v1/views/{id}',
  operationId: 'views.update',
  summary: "Change a view (one's own personal view with create; a shared one, or sharing, with update)",
  tags,
  permission: `${resource}:create`,
  request: { params: IdParams, ...jsonBody(UpdateViewSchema) },
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
const deleteView = defineRoute({
  method: 'delete',
  path: '/api/v1/views/{id}',
  operationId: 'views.delete',
  summary: "Delete a view (one's own personal view with create; a shared one with delete)",
  tags,
  permission: `${resource}:create`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const viewRecords = defineRoute({
  method: 'get',
  path: '/api/v1/views/{id}/records',
  operationId: 'views.records',
  summary:
    "The view's collection as the caller may read it: the view's filter, fields, sort and search within the caller's own row and column rules",
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams, query: ViewRecordsQuerySchema },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(z.record(z.string(), z.unknown())),
        ...pageShape,
        cursors: z.object({ next: z.string().nullable(), previous: z.string().nullable() }).optional(),
      }),
      'A page of records',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'collection_not_found'),
  },
})

/** /api/v1/views (decision 063). */
export function viewsRoutes(views: ViewsService, security: Security) {
  const router = createRouter(security)
  router.openapi(listViews, async (c) => {
    const { page, limit, collection } = c.req.valid('query')
    const { data, total } = await views.list(
      principalOf(c),
      page,
      limit,
      collection === undefined ? {} : { collection },
    )
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(getView, async (c) => c.json({ data: await views.get(principalOf(c), c.req.valid('param').id) }, 200))
  router.openapi(createView, async (c) =>
    c.json({ data: await views.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(updateView, async (c) =>
    c.json({ data: await views.update(principalOf(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  )
  router.openapi(deleteView, async (c) => {
    await views.delete(principalOf(c), c.req.valid('param').id)
    return c.body(null, 204)
  })
  router.openapi(viewRecords, async (c) =>
    c.json(await views.records(principalOf(c), c.req.valid('param').id, c.req.valid('query')), 200),
  )
  return router
}
