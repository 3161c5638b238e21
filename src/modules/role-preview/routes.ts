import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  queryInteger,
  z,
  type Security,
} from '../../lib/http/index.js'
import type { RolePreviewService } from './service.js'

const preview = defineRoute({
  method: 'get',
  path: '/api/v1/roles/{id}/preview',
  operationId: 'roles.preview',
  summary:
    'What a role can see: a page of a collection read as a person holding it (never beyond what the caller may read)',
  tags: ['Roles'],
  permission: 'system/roles:read',
  request: {
    params: z.object({ id: z.string().min(1).max(64) }),
    query: z.object({
      collection: z.string().min(1).max(100),
      as: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .openapi({ description: "The user whose $CURRENT_USER the role's rules are read with; the caller by default" }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.object({
          allowed: z.boolean(),
          reason: z.string().nullable(),
          as: z.string(),
          data: z.array(z.record(z.string(), z.unknown())),
          hidden: z.number().int().openapi({ description: 'Rows of the page the caller may not read itself' }),
        }),
      }),
      'The preview',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})

export function rolePreviewRoutes(service: RolePreviewService, security: Security) {
  const router = createRouter(security)
  router.openapi(preview, async (c) => {
    const query = c.req.valid('query')
    const data = await service.preview(principalOf(c), {
      roleId: c.req.valid('param').id,
      collection: query.collection,
      as: query.as,
      limit: query.limit,
    })
    return c.json({ data }, 200)
  })
  return router
}
