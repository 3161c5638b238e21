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
  CreateNavigationItemSchema,
  NavigationItemSchema,
  NavigationNodeSchema,
  NavigationOrderSchema,
  UpdateNavigationItemSchema,
} from './schemas.js'
import type { NavigationService } from './service.js'

const tags = ['Navigation']
const resource = 'system/navigation'
const base = '/api/v1/navigation'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: NavigationItemSchema })
const writeErrors = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'validation_error',
  'unsupported_media_type',
] as const

const navigationTree = defineRoute({
  method: 'get',
  path: `${base}/tree`,
  operationId: 'navigation.tree',
  summary: "The caller's menu: items whose target it may not read are left out, with their children",
  tags,
  permission: `${resource}:read`,
  responses: {
    200: jsonContent(z.object({ data: z.array(NavigationNodeSchema) }), 'The top-level items, nested'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const listItems = defineRoute({
  method: 'get',
  path: base,
  operationId: 'navigation.list',
  summary: 'Navigation items, flat, by sortOrder',
  tags,
  permission: `${resource}:read`,
  request: {
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(NavigationItemSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of items',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getItem = defineRoute({
  method: 'get',
  path: `${base}/{id}`,
  operationId: 'navigation.get',
  summary: 'One navigation item',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The item'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createItem = defineRoute({
  method: 'post',
  path: base,
  operationId: 'navigation.create',
  summary: 'Add a navigation item',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateNavigationItemSchema),
  responses: {
    201: jsonContent(One, 'Added'),
    ...errorResponses(...writeErrors, 'conflict'),
  },
})
const updateItem = defineRoute({
  method: 'patch',
  path: `${base}/{id}`,
  operationId: 'navigation.update',
  summary: 'Change a navigation item (a new parentId moves it with its children)',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(UpdateNavigationItemSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses(...writeErrors, 'not_found'),
  },
})
const deleteItem = defineRoute({
  method: 'delete',
  path: `${base}/{id}`,
  operationId: 'navigation.delete',
  summary: 'Delete a navigation item without children',
  tags,
  permission: `${resource}:delete`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict'),
  },
})
const reorderItems = defineRoute({
  method: 'put',
  path: `${base}/order`,
  operationId: 'navigation.reorder',
  summary: 'Place every item at once (parent and sortOrder), atomically',
  tags,
  permission: `${resource}:update`,
  request: jsonBody(NavigationOrderSchema),
  responses: {
    200: jsonContent(z.object({ data: z.array(NavigationItemSchema) }), 'Every item, in its new place'),
    ...errorResponses(...writeErrors),
  },
})

/** /api/v1/navigation (decision 064). The tree and order routes are registered before /{id}. */
export function navigationRoutes(navigation: NavigationService, security: Security) {
  const router = createRouter(security)
  router.openapi(navigationTree, async (c) => c.json({ data: await navigation.tree(principalOf(c)) }, 200))
  router.openapi(reorderItems, async (c) =>
    c.json({ data: await navigation.reorder(principalOf(c), c.req.valid('json')) }, 200),
  )
  router.openapi(listItems, async (c) => {
    const { page, limit } = c.req.valid('query')
    const { data, total } = await navigation.list(principalOf(c), page, limit)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(getItem, async (c) =>
    c.json({ data: await navigation.get(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(createItem, async (c) =>
    c.json({ data: await navigation.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(updateItem, async (c) =>
    c.json({ data: await navigation.update(principalOf(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  )
  router.openapi(deleteItem, async (c) => {
    await navigation.delete(principalOf(c), c.req.valid('param').id)
    return c.body(null, 204)
  })
  return router
}
