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
import {
  CreateRendererSchema,
  RenderedRecordSchema,
  RendererSchema,
  RenderRecordSchema,
  UpdateRendererSchema,
} from './schemas.js'
import type { RenderersService } from './service.js'

const tags = ['Renderers']
const resource = 'system/renderers'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: RendererSchema })

const listRenderers = defineRoute({
  method: 'get',
  path: '/api/v1/renderers',
  operationId: 'renderers.list',
  summary: 'Renderers of the project, by name (optionally of one collection)',
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
        data: z.array(RendererSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of renderers',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getRenderer = defineRoute({
  method: 'get',
  path: '/api/v1/renderers/{id}',
  operationId: 'renderers.get',
  summary: 'One renderer',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The renderer'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createRenderer = defineRoute({
  method: 'post',
  path: '/api/v1/renderers',
  operationId: 'renderers.create',
  summary: "Save a renderer (its template is checked against the collection's fields)",
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateRendererSchema),
  responses: {
    201: jsonContent(One, 'Saved'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'collection_not_found',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const updateRenderer = defineRoute({
  method: 'patch',
  path: '/api/v1/renderers/{id}',
  operationId: 'renderers.update',
  summary: 'Change a renderer (a new template or collection is checked again)',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(UpdateRendererSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'collection_not_found',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const deleteRenderer = defineRoute({
  method: 'delete',
  path: '/api/v1/renderers/{id}',
  operationId: 'renderers.delete',
  summary: 'Delete a renderer',
  tags,
  permission: `${resource}:delete`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const renderRecord = defineRoute({
  method: 'post',
  path: '/api/v1/renderers/{id}/render',
  operationId: 'renderers.render',
  summary: 'Render one record the caller may read, as the caller (values escaped; hidden fields empty)',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams, ...jsonBody(RenderRecordSchema) },
  responses: {
    200: jsonContent(z.object({ data: RenderedRecordSchema }), 'The rendered HTML fragment'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'record_not_found',
      'collection_not_found',
      'validation_error',
      'limit_exceeded',
      'unsupported_media_type',
    ),
  },
})

/** /api/v1/renderers (decision 065). */
export function renderersRoutes(renderers: RenderersService, security: Security) {
  const router = createRouter(security)
  router.openapi(listRenderers, async (c) => {
    const { page, limit, collection } = c.req.valid('query')
    const { data, total } = await renderers.list(principalOf(c), page, limit, collection)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(getRenderer, async (c) =>
    c.json({ data: await renderers.get(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(createRenderer, async (c) =>
    c.json({ data: await renderers.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(updateRenderer, async (c) =>
    c.json({ data: await renderers.update(principalOf(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  )
  router.openapi(deleteRenderer, async (c) => {
    await renderers.delete(principalOf(c), c.req.valid('param').id)
    return c.body(null, 204)
  })
  router.openapi(renderRecord, async (c) =>
    c.json(
      {
        data: await renderers.render(principalOf(c), c.req.valid('param').id, c.req.valid('json').recordId),
      },
      200,
    ),
  )
  return router
}
