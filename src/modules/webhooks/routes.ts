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
import { CreateWebhookSchema, DeliverySchema, UpdateWebhookSchema, WebhookSchema } from './schemas.js'
import type { WebhooksService } from './service.js'

const tags = ['Webhooks']
const resource = 'system/webhooks'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: WebhookSchema })

const listWebhooks = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks',
  operationId: 'webhooks.list',
  summary: 'Collection webhooks of the project (secrets and header values masked)',
  tags,
  permission: `${resource}:read`,
  responses: {
    200: jsonContent(z.object({ data: z.array(WebhookSchema) }), 'Webhooks'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const getWebhook = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks/{id}',
  operationId: 'webhooks.get',
  summary: 'One collection webhook',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The webhook'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createWebhook = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks',
  operationId: 'webhooks.create',
  summary: 'Send record events of a collection to a URL, signed',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateWebhookSchema),
  responses: {
    201: jsonContent(One, 'Saved'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'collection_not_found', 'unsupported_media_type'),
  },
})
const updateWebhook = defineRoute({
  method: 'patch',
  path: '/api/v1/webhooks/{id}',
  operationId: 'webhooks.update',
  summary:
    'Change a webhook; an omitted or masked secret is kept, null removes it; a url on another origin drops the stored secret and header values not sent again',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(UpdateWebhookSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'collection_not_found',
      'unsupported_media_type',
    ),
  },
})
const deleteWebhook = defineRoute({
  method: 'delete',
  path: '/api/v1/webhooks/{id}',
  operationId: 'webhooks.delete',
  summary: 'Delete a webhook and its delivery log',
  tags,
  permission: `${resource}:delete`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const listDeliveries = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks/{id}/deliveries',
  operationId: 'webhooks.deliveries',
  summary: 'The delivery log of a webhook, newest first: status, attempts, durations',
  tags,
  permission: `${resource}:read`,
  request: {
    params: IdParams,
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(DeliverySchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of deliveries',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})

/** /api/v1/webhooks (core-api § Events: collection webhooks). */
export function webhooksRoutes(webhooks: WebhooksService, security: Security) {
  const router = createRouter(security)
  router.openapi(listWebhooks, async (c) => c.json({ data: await webhooks.list(principalOf(c)) }, 200))
  router.openapi(getWebhook, async (c) =>
    c.json({ data: await webhooks.get(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(createWebhook, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await webhooks.create(p, c.req.valid('json')) }, 201)
  })
  router.openapi(updateWebhook, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await webhooks.update(p, c.req.valid('param').id, c.req.valid('json')) }, 200)
  })
  router.openapi(deleteWebhook, async (c) => {
    await webhooks.delete(principalOf(c), c.req.valid('param').id)
    return c.body(null, 204)
  })
  router.openapi(listDeliveries, async (c) => {
    const { page, limit } = c.req.valid('query')
    const { data, total } = await webhooks.deliveries(principalOf(c), c.req.valid('param').id, page, limit)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  return router
}
