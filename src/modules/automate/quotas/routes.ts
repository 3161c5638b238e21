import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../../lib/http/index.js'
import { LimitsPatchSchema, QuotasSchema } from './limits.js'
import type { QuotasService } from './service.js'

const tags = ['Automation']
const Quotas = z.object({ data: QuotasSchema })

const getQuotas = defineRoute({
  method: 'get',
  path: '/api/v1/automate/quotas',
  operationId: 'automateQuotas.get',
  summary: "The project's automation quotas and current usage",
  tags,
  permission: 'system/automate:read',
  responses: { 200: jsonContent(Quotas, 'Limits and usage'), ...errorResponses('unauthorized', 'forbidden') },
})
const updateQuotas = defineRoute({
  method: 'patch',
  path: '/api/v1/automate/quotas',
  operationId: 'automateQuotas.update',
  summary: 'Change automation quotas (positive integers)',
  tags,
  permission: 'system/automate:manage',
  request: jsonBody(
    z.record(z.string(), z.unknown()).openapi({ description: LimitsPatchSchema.description ?? 'Any of the limits' }),
  ),
  responses: {
    200: jsonContent(Quotas, 'Limits and usage after the change'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'validation_error', 'unsupported_media_type'),
  },
})

/** /api/v1/automate/quotas (automation spec "Quotas"); the service validates the body (422). */
export function quotasRoutes(quotas: QuotasService, security: Security) {
  const router = createRouter(security)
  router.openapi(getQuotas, async (c) => c.json({ data: await quotas.get(principalOf(c)) }, 200))
  router.openapi(updateQuotas, async (c) =>
    c.json({ data: await quotas.update(principalOf(c), c.req.valid('json')) }, 200),
  )
  return router
}
