import { createRouter, defineRoute, errorResponses, principalOf, z, type Security } from '../../lib/http/index.js'
import type { ApiKeysService } from './service.js'

const ApiKeySchema = z
  .object({
    id: z.string(),
    label: z.string(),
    capabilities: z.array(z.string()),
    user_id: z.string().nullable(),
    created_at: z.number().int(),
    expires_at: z.number().int().nullable(),
    last_used_at: z.number().int().nullable(),
  })
  .openapi('ApiKey')

const CreatedKeySchema = ApiKeySchema.omit({ last_used_at: true, user_id: true })
  .extend({ raw: z.string().openapi({ description: 'The full key; shown only in this response' }) })
  .openapi('CreatedApiKey')

const tags = ['API keys']

const createKey = defineRoute({
  method: 'post',
  path: '/api/auth/api-keys',
  operationId: 'apiKeys.create',
  summary: 'Create an API key (the raw key is shown once)',
  tags,
  permission: 'authenticated',
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z.object({
            label: z.string().trim().min(1).max(200),
            capabilities: z
              .array(z.string().max(200))
              .max(100)
              .openapi({ example: ['collections/articles:read'] }),
            expires_at: z
              .number()
              .int()
              .nullable()
              .optional()
              .openapi({ description: 'Unix seconds; omit for no expiry' }),
            service: z.boolean().optional().openapi({ description: 'super_admin only: a key bound to no user' }),
          }),
        },
      },
    },
  },
  responses: {
    201: { description: 'Created', content: { 'application/json': { schema: CreatedKeySchema } } },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})

const listKeys = defineRoute({
  method: 'get',
  path: '/api/auth/api-keys',
  operationId: 'apiKeys.list',
  summary: 'API keys of the current project (never the raw key)',
  tags,
  permission: 'authenticated',
  responses: {
    200: { description: 'Keys', content: { 'application/json': { schema: z.array(ApiKeySchema) } } },
    ...errorResponses('unauthorized', 'forbidden'),
  },
})

const revokeKey = defineRoute({
  method: 'delete',
  path: '/api/auth/api-keys/{id}',
  operationId: 'apiKeys.revoke',
  summary: 'Revoke a key; it stops working at once',
  tags,
  permission: 'authenticated',
  request: { params: z.object({ id: z.string().min(1).max(64) }) },
  responses: {
    200: {
      description: 'Revoked',
      content: { 'application/json': { schema: z.object({ success: z.literal(true) }) } },
    },
    ...errorResponses('unauthorized', 'forbidden', 'not_found'),
  },
})

/** /api/auth/api-keys. */
export function apiKeysRoutes(keys: ApiKeysService, security: Security) {
  const router = createRouter(security)
  router.openapi(createKey, async (c) => {
    const created = await keys.create(principalOf(c), c.req.valid('json'))
    const { id, label, capabilities, raw, created_at, expires_at } = created
    c.header('Cache-Control', 'no-store')
    return c.json({ id, label, capabilities, raw, created_at, expires_at }, 201)
  })
  router.openapi(listKeys, async (c) => c.json(await keys.list(principalOf(c)), 200))
  router.openapi(revokeKey, async (c) => {
    await keys.revoke(principalOf(c), c.req.valid('param').id)
    return c.json({ success: true as const }, 200)
  })
  return router
}
