import {
  createRouter,
  dataEnvelope,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  type Security,
} from '../../lib/http/index.js'
import { ValidateRequestSchema, ValidateResultSchema } from './schemas.js'
import type { BlueprintsService } from './service.js'

const tags = ['Blueprints']

const validateBlueprint = defineRoute({
  method: 'post',
  path: '/api/v1/blueprints/validate',
  operationId: 'blueprints.validate',
  summary: 'Check a blueprint document (source or base64 zip): diagnostics, parameters, assemblies, bricks',
  tags,
  permission: 'authenticated',
  request: jsonBody(ValidateRequestSchema),
  responses: {
    200: jsonContent(dataEnvelope(ValidateResultSchema), 'Read: ok, and every diagnostic (a failing document too)'),
    ...errorResponses('invalid_request', 'unauthorized', 'payload_too_large', 'unsupported_media_type'),
  },
})

/** /api/v1/blueprints (docs/blueprints.md). */
export function blueprintsRoutes(blueprints: BlueprintsService, security: Security) {
  const router = createRouter(security)
  router.openapi(validateBlueprint, async (c) =>
    c.json({ data: await blueprints.validate(principalOf(c), c.req.valid('json')) }, 200),
  )
  return router
}
