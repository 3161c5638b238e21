import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../lib/http/index.js'
import { CatalogEntrySchema, OperationDescriptionSchema } from './schemas.js'
import type { OperationsService } from './service.js'

const tags = ['Automation']
const permission = 'system/automate:read'

const listOperations = defineRoute({
  method: 'get',
  path: '/api/v1/automate/operations',
  operationId: 'operations.list',
  summary: 'Every registered operation with its config form fields',
  tags,
  permission,
  responses: {
    200: jsonContent(z.object({ data: z.array(CatalogEntrySchema) }), 'The catalog'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const getOperation = defineRoute({
  method: 'get',
  path: '/api/v1/automate/operations/{type}',
  operationId: 'operations.get',
  summary: 'One operation with its full config schema (JSON Schema)',
  tags,
  permission,
  request: { params: z.object({ type: z.string().min(1).max(100) }) },
  responses: {
    200: jsonContent(z.object({ data: OperationDescriptionSchema }), 'The operation'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})

/** /api/v1/automate/operations (automation spec "Operations catalog"); the /api/automate alias is mapped by the HTTP layer. */
export function operationsRoutes(operations: OperationsService, security: Security) {
  const router = createRouter(security)
  router.openapi(listOperations, async (c) => c.json({ data: await operations.catalog(principalOf(c)) }, 200))
  router.openapi(getOperation, async (c) =>
    c.json({ data: await operations.describe(principalOf(c), c.req.valid('param').type) }, 200),
  )
  return router
}
