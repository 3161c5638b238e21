import {
  createRouter,
  dataEnvelope,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  queryFlag,
  z,
  type Security,
} from '../../../lib/http/index.js'
import type { BlueprintsService } from '../service.js'
import {
  InstallRequestSchema,
  InstallSchema,
  SettleRequestSchema,
  UninstallPreviewSchema,
  UninstallRequestSchema,
} from './schemas.js'

const tags = ['Blueprints']
// Who may is the service's: a person first where one is needed (403 install_needs_person before grants are
// consulted), then system/blueprints:read; each brick's write is its own service's check.
const permission = 'authenticated'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const ApplyQuery = z.object({
  apply: queryFlag.optional().openapi({ description: 'true: the server makes the calls itself, as the caller' }),
})
const One = dataEnvelope(InstallSchema)

const openInstall = defineRoute({
  method: 'post',
  path: '/api/v1/blueprints/installs',
  operationId: 'blueprints.openInstall',
  summary: 'Open an install run (two-phase: the calls to make, then settle); ?apply=true installs it here and now',
  tags,
  permission,
  request: { ...jsonBody(InstallRequestSchema), query: ApplyQuery },
  responses: {
    201: jsonContent(One, 'The run: pending rows and actions, or (apply) finished, complete or partial'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'install_needs_person',
      'conflict',
      'payload_too_large',
      'unsupported_media_type',
    ),
  },
})
const settleInstall = defineRoute({
  method: 'post',
  path: '/api/v1/blueprints/installs/{id}/settle',
  operationId: 'blueprints.settleInstall',
  summary: "The opener reports its calls' outcomes; each is verified by a read-back here",
  tags,
  permission,
  request: { params: IdParams, ...jsonBody(SettleRequestSchema) },
  responses: {
    200: jsonContent(One, 'The run after the report'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'install_needs_person', 'not_found', 'conflict'),
  },
})
const listInstalls = defineRoute({
  method: 'get',
  path: '/api/v1/blueprints/installs',
  operationId: 'blueprints.listInstalls',
  summary: "The project's install runs, newest first",
  tags,
  permission,
  request: { query: z.object({ blueprint: z.string().min(1).max(64).optional() }) },
  responses: {
    200: jsonContent(dataEnvelope(z.array(InstallSchema)), 'Install runs'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getInstall = defineRoute({
  method: 'get',
  path: '/api/v1/blueprints/installs/{id}',
  operationId: 'blueprints.getInstall',
  summary: 'One install run and its resource rows',
  tags,
  permission,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The run'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const previewUninstall = defineRoute({
  method: 'get',
  path: '/api/v1/blueprints/installs/{id}/uninstall',
  operationId: 'blueprints.previewUninstall',
  summary: 'What uninstalling would remove (dependents first) and the calls that remove it; writes nothing',
  tags,
  permission,
  request: { params: IdParams },
  responses: {
    200: jsonContent(dataEnvelope(UninstallPreviewSchema), 'The preview'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'install_needs_person', 'not_found', 'conflict'),
  },
})
const uninstall = defineRoute({
  method: 'post',
  path: '/api/v1/blueprints/installs/{id}/uninstall',
  operationId: 'blueprints.uninstall',
  summary: 'Uninstall: record what was removed (removed ids), or ?apply=true to remove it here as the caller',
  tags,
  permission,
  request: {
    params: IdParams,
    query: ApplyQuery,
    body: { required: false, content: { 'application/json': { schema: UninstallRequestSchema } } },
  },
  responses: {
    200: jsonContent(One, 'The run, uninstalled'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'install_needs_person', 'not_found', 'conflict'),
  },
})

/** /api/v1/blueprints/installs (docs/blueprints.md, decision 070). */
export function installRoutes(blueprints: BlueprintsService, security: Security) {
  const router = createRouter(security)
  router.openapi(openInstall, async (c) =>
    c.json(
      { data: await blueprints.open(principalOf(c), c.req.valid('json'), c.req.valid('query').apply ?? false) },
      201,
    ),
  )
  router.openapi(settleInstall, async (c) =>
    c.json({ data: await blueprints.settle(principalOf(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  )
  router.openapi(listInstalls, async (c) =>
    c.json({ data: await blueprints.list(principalOf(c), c.req.valid('query').blueprint) }, 200),
  )
  router.openapi(getInstall, async (c) =>
    c.json({ data: await blueprints.get(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(previewUninstall, async (c) =>
    c.json({ data: await blueprints.previewUninstall(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(uninstall, async (c) =>
    c.json(
      {
        data: await blueprints.uninstall(
          principalOf(c),
          c.req.valid('param').id,
          c.req.valid('json') ?? {},
          c.req.valid('query').apply ?? false,
        ),
      },
      200,
    ),
  )
  return router
}
