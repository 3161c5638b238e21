import {
  createRouter,
  defineRoute,
  errorResponses,
  principalOf,
  queryInteger,
  z,
  type Security,
} from '../../lib/http/index.js'
import type { AuditService } from './service.js'

const EntrySchema = z
  .object({
    id: z.string(),
    at: z.number().int(),
    action: z.string(),
    actor: z.object({ type: z.string(), id: z.string().nullable() }),
    target: z.object({ type: z.string(), id: z.string().nullable() }).nullable(),
    ip: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi('AuditEntry')

const listAudit = defineRoute({
  method: 'get',
  path: '/api/v1/audit-log',
  operationId: 'audit.list',
  summary: 'Security events of the project, newest first',
  tags: ['Audit'],
  permission: 'system/audit-log:read',
  request: {
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
      action: z.string().max(64).optional(),
    }),
  },
  responses: {
    200: {
      description: 'A page of entries',
      content: {
        'application/json': {
          schema: z.object({
            data: z.array(EntrySchema),
            total: z.number().int(),
            page: z.number().int(),
            limit: z.number().int(),
            hasMore: z.boolean(),
          }),
        },
      },
    },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})

/** GET /api/v1/audit-log (administrators: the permission is held by roles with admin access). */
export function auditRoutes(audit: AuditService, security: Security) {
  const router = createRouter(security)
  router.openapi(listAudit, async (c) => {
    const { page, limit, action } = c.req.valid('query')
    const { data, total } = await audit.list(principalOf(c), { page, limit, action })
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  return router
}
