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
import { PlanRequestSchema, PlanResultSchema, ValidateRequestSchema, ValidateResultSchema } from './schemas.js'
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

const planBlueprint = defineRoute({
  method: 'post',
  path: '/api/v1/blueprints/plan',
  operationId: 'blueprints.plan',
  summary: 'What installing a blueprint would do: a verdict per brick, the calls that apply them; writes nothing',
  tags,
  // Who may plan is the service's: a person first (403 install_needs_person before grants are consulted),
  // then system/blueprints:read.
  permission: 'authenticated',
  request: jsonBody(PlanRequestSchema),
  responses: {
    200: jsonContent(dataEnvelope(PlanResultSchema), 'The plan (a failing document too: ok false, no verdicts)'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'install_needs_person',
      'payload_too_large',
      'unsupported_media_type',
    ),
  },
})

/** /api/v1/blueprints (docs/blueprints.md). */
export function blueprintsRoutes(blueprints: BlueprintsService, security: Security) {
  const router = createRouter(security)
  router.openapi(validateBlueprint, async (c) =>
    c.json({ data: await blueprints.validate(principalOf(c), c.req.valid('json')) }, 200),
  )
  router.openapi(planBlueprint, async (c) =>
    c.json({ data: await blueprints.plan(principalOf(c), c.req.valid('json')) }, 200),
  )
  return router
}
