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
import {
  AssignableRoleSchema,
  FlowDetailSchema,
  FlowSchema,
  PublishedSchema,
  VersionSchema,
  VersionSummarySchema,
} from './schemas.js'
import type { OperationDefinition } from '../../operations/index.js'
import {
  publishedCreateBody,
  publishedDocument,
  publishedPatchBody,
  registerPublishedFlowSchemas,
} from './published-schemas.js'
import type { FlowsService } from './service.js'

const tags = ['Automation']
const base = '/api/v1/automate/flows'
const Id = z.object({ flowId: z.string().min(1).max(64) })
const IdVer = Id.extend({
  ver: z
    .string()
    .regex(/^[1-9]\d{0,8}$/, 'must be a version number')
    .transform(Number),
})
const ImportQuery = z.object({ flowId: z.string().min(1).max(64).optional() })
// Bodies are checked by the service (422 validation_error naming the path), so in-process callers get the same checks.
// `published` only replaces what the document says of a body (published-schemas.ts), never what is accepted.
const Body = (description: string, example?: Record<string, unknown>, published: Record<string, unknown> = {}) =>
  z.record(z.string(), z.unknown()).openapi({ description, ...(example ? { example } : {}), ...published })
const createExample = {
  name: 'Order sync',
  triggerType: 'webhook',
  triggerConfig: { allowed_methods: ['POST'], require_auth: true, secret: 'a shared secret' },
  operations: [{ key: 'say', type: 'log', config: { message: 'order {{$trigger.body.id}}' } }],
  options: { timeout_ms: 10000 },
}
const Detail = z.object({ data: FlowDetailSchema })
const errors = ['invalid_request', 'unauthorized', 'forbidden', 'not_found'] as const
const writeErrors = [...errors, 'validation_error', 'unsupported_media_type'] as const

const routes = {
  list: defineRoute({
    method: 'get',
    path: base,
    operationId: 'automateFlows.list',
    summary: "The project's flows (credentials masked without update)",
    tags,
    permission: 'system/automate:read',
    responses: {
      200: jsonContent(z.object({ data: z.array(FlowSchema) }), 'Flows'),
      ...errorResponses('unauthorized', 'forbidden'),
    },
  }),
  get: defineRoute({
    method: 'get',
    path: `${base}/{flowId}`,
    operationId: 'automateFlows.get',
    summary: 'One flow with publishedOperations and webhookEndpoint',
    tags,
    permission: 'system/automate:read',
    request: { params: Id },
    responses: { 200: jsonContent(Detail, 'The flow'), ...errorResponses(...errors) },
  }),
  create: defineRoute({
    method: 'post',
    path: base,
    operationId: 'automateFlows.create',
    summary: 'Create a flow in draft (runAs is refused here)',
    tags,
    permission: 'system/automate:create',
    request: jsonBody(
      Body(
        'name (req), description, icon, color, triggerType (req), triggerConfig (req), operations (req), options, collections; checked with 422 validation_error (docs/automation.md)',
        createExample,
        publishedCreateBody(),
      ),
    ),
    responses: {
      201: jsonContent(Detail, 'The new draft'),
      ...errorResponses(...writeErrors, 'quota_exceeded', 'conflict'),
    },
  }),
  update: defineRoute({
    method: 'patch',
    path: `${base}/{flowId}`,
    operationId: 'automateFlows.update',
    summary: "Change the flow's draft (a mask keeps a stored credential)",
    tags,
    permission: 'system/automate:update',
    request: {
      params: Id,
      ...jsonBody(
        Body(
          'any of name, description, icon, color, triggerType, triggerConfig, operations, options (merged), collections, runAs; a mask keeps a stored credential',
          { name: 'Renamed', runAs: 'triggering_user' },
          publishedPatchBody,
        ),
      ),
    },
    responses: { 200: jsonContent(Detail, 'The flow'), ...errorResponses(...writeErrors) },
  }),
  delete: defineRoute({
    method: 'delete',
    path: `${base}/{flowId}`,
    operationId: 'automateFlows.delete',
    summary: 'Delete a flow with its versions, runs, step logs and webhook',
    tags,
    permission: 'system/automate:delete',
    request: { params: Id },
    responses: { 200: jsonContent(z.object({ success: z.literal(true) }), 'Deleted'), ...errorResponses(...errors) },
  }),
  duplicate: defineRoute({
    method: 'post',
    path: `${base}/{flowId}/duplicate`,
    operationId: 'automateFlows.duplicate',
    summary: "A copy of the flow's draft, in draft",
    tags,
    permission: 'system/automate:create',
    request: {
      params: Id,
      body: { required: false, content: { 'application/json': { schema: Body('name (optional)') } } },
    },
    responses: { 201: jsonContent(Detail, 'The copy'), ...errorResponses(...writeErrors, 'quota_exceeded') },
  }),
  export: defineRoute({
    method: 'get',
    path: `${base}/{flowId}/export`,
    operationId: 'automateFlows.export',
    summary: 'The portable flow document (credentials masked for everyone)',
    tags,
    permission: 'system/automate:read',
    request: { params: Id },
    responses: {
      200: jsonContent(
        z.object({ data: Body('The portable flow document', undefined, publishedDocument()) }),
        'The document',
      ),
      ...errorResponses(...errors),
    },
  }),
  import: defineRoute({
    method: 'post',
    path: `${base}/import`,
    operationId: 'automateFlows.import',
    summary: "Import a flow document; flowId replaces that flow's draft",
    tags,
    permission: 'system/automate:create',
    request: {
      query: ImportQuery,
      ...jsonBody(Body('An exported document (format plinth-flow-v1)', undefined, publishedDocument())),
    },
    responses: {
      201: jsonContent(Detail, 'The imported flow'),
      200: jsonContent(Detail, 'The replaced flow (flowId)'),
      ...errorResponses(...writeErrors, 'conflict', 'quota_exceeded'),
    },
  }),
  status: defineRoute({
    method: 'patch',
    path: `${base}/{flowId}/status`,
    operationId: 'automateFlows.status',
    summary: 'Set the status: draft, active (needs a published version) or inactive',
    tags,
    permission: 'system/automate:update',
    request: { params: Id, ...jsonBody(Body('status: draft, active or inactive', { status: 'active' })) },
    responses: { 200: jsonContent(Detail, 'The flow'), ...errorResponses(...writeErrors, 'conflict') },
  }),
  publish: defineRoute({
    method: 'post',
    path: `${base}/{flowId}/publish`,
    operationId: 'automateFlows.publish',
    summary: 'Freeze the draft as a new immutable version and publish it; answers preflight warnings',
    tags,
    permission: 'system/automate:update',
    request: {
      params: Id,
      body: { required: false, content: { 'application/json': { schema: Body('changeSummary (optional)') } } },
    },
    responses: {
      200: jsonContent(
        z.object({ data: PublishedSchema }),
        'The version, and the preflight warnings about it (never a refusal)',
      ),
      ...errorResponses(...writeErrors),
    },
  }),
  versions: defineRoute({
    method: 'get',
    path: `${base}/{flowId}/versions`,
    operationId: 'automateFlows.versions',
    summary: 'The versions, newest first',
    tags,
    permission: 'system/automate:read',
    request: { params: Id },
    responses: {
      200: jsonContent(z.object({ data: z.array(VersionSummarySchema) }), 'Versions'),
      ...errorResponses(...errors),
    },
  }),
  version: defineRoute({
    method: 'get',
    path: `${base}/{flowId}/versions/{ver}`,
    operationId: 'automateFlows.version',
    summary: "One version's snapshot",
    tags,
    permission: 'system/automate:read',
    request: { params: IdVer },
    responses: { 200: jsonContent(z.object({ data: VersionSchema }), 'The version'), ...errorResponses(...errors) },
  }),
  rollback: defineRoute({
    method: 'post',
    path: `${base}/{flowId}/rollback/{ver}`,
    operationId: 'automateFlows.rollback',
    summary: 'Copy a version into the draft and publish it again',
    tags,
    permission: 'system/automate:manage',
    request: { params: IdVer },
    responses: { 200: jsonContent(Detail, 'The flow'), ...errorResponses(...errors) },
  }),
  triggerTypes: defineRoute({
    method: 'get',
    path: '/api/v1/automate/triggers',
    operationId: 'automate.triggerTypes',
    summary: 'The trigger types with their config schemas (JSON Schema)',
    tags,
    permission: 'system/automate:read',
    responses: {
      200: jsonContent(
        z.object({
          data: z.array(z.object({ type: z.string(), label: z.string(), schema: z.record(z.string(), z.unknown()) })),
        }),
        'Trigger types',
      ),
      ...errorResponses('unauthorized', 'forbidden'),
    },
  }),
  assignableRoles: defineRoute({
    method: 'get',
    path: '/api/v1/automate/assignable-roles',
    operationId: 'automate.assignableRoles',
    summary: 'Roles the caller may delegate a flow to (runAs role:<id>)',
    tags,
    permission: 'authenticated',
    responses: {
      200: jsonContent(z.object({ data: z.array(AssignableRoleSchema) }), 'Roles'),
      ...errorResponses('unauthorized'),
    },
  }),
}

/** /api/v1/automate/flows and /assignable-roles (automation spec "Flows"); the bare /api/automate alias is mapped by the HTTP layer. */
export function flowsRoutes(flows: FlowsService, security: Security, operations: readonly OperationDefinition[]) {
  const r = createRouter(security)
  registerPublishedFlowSchemas(r, operations)
  r.openapi(routes.list, async (c) => c.json({ data: await flows.list(principalOf(c)) }, 200))
  r.openapi(routes.get, async (c) =>
    c.json({ data: await flows.get(principalOf(c), c.req.valid('param').flowId) }, 200),
  )
  r.openapi(routes.create, async (c) => c.json({ data: await flows.create(principalOf(c), c.req.valid('json')) }, 201))
  r.openapi(routes.update, async (c) =>
    c.json({ data: await flows.update(principalOf(c), c.req.valid('param').flowId, c.req.valid('json')) }, 200),
  )
  r.openapi(routes.delete, async (c) => {
    await flows.delete(principalOf(c), c.req.valid('param').flowId)
    return c.json({ success: true as const }, 200)
  })
  r.openapi(routes.duplicate, async (c) =>
    c.json({ data: await flows.duplicate(principalOf(c), c.req.valid('param').flowId, c.req.valid('json')) }, 201),
  )
  r.openapi(routes.export, async (c) =>
    c.json({ data: await flows.exportFlow(principalOf(c), c.req.valid('param').flowId) }, 200),
  )
  r.openapi(routes.import, async (c) => {
    const { flowId } = c.req.valid('query')
    const data = await flows.importFlow(principalOf(c), c.req.valid('json'), flowId)
    return flowId === undefined ? c.json({ data }, 201) : c.json({ data }, 200)
  })
  r.openapi(routes.status, async (c) =>
    c.json({ data: await flows.setStatus(principalOf(c), c.req.valid('param').flowId, c.req.valid('json')) }, 200),
  )
  r.openapi(routes.publish, async (c) =>
    c.json({ data: await flows.publish(principalOf(c), c.req.valid('param').flowId, c.req.valid('json')) }, 200),
  )
  r.openapi(routes.versions, async (c) =>
    c.json({ data: await flows.versions(principalOf(c), c.req.valid('param').flowId) }, 200),
  )
  r.openapi(routes.version, async (c) => {
    const { flowId, ver } = c.req.valid('param')
    return c.json({ data: await flows.version(principalOf(c), flowId, ver) }, 200)
  })
  r.openapi(routes.rollback, async (c) => {
    const { flowId, ver } = c.req.valid('param')
    return c.json({ data: await flows.rollback(principalOf(c), flowId, ver) }, 200)
  })
  r.openapi(routes.triggerTypes, async (c) => c.json({ data: await flows.triggerTypes(principalOf(c)) }, 200))
  r.openapi(routes.assignableRoles, async (c) => c.json({ data: await flows.assignableRoles(principalOf(c)) }, 200))
  return r
}
