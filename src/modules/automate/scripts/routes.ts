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
import { ScriptSchema, ScriptTestResultSchema } from './schemas.js'
import type { ScriptsService } from './service.js'

const tags = ['Automation']
const base = '/api/v1/automate/scripts'
const Id = z.object({ scriptId: z.string().min(1).max(64) })
// Bodies are checked by the service (422 validation_error naming the path), so in-process callers get the same checks.
const Body = (description: string, example: Record<string, unknown>) =>
  z.record(z.string(), z.unknown()).openapi({ description, example })
const One = z.object({ data: ScriptSchema })
const errors = ['invalid_request', 'unauthorized', 'forbidden', 'not_found'] as const
const writeErrors = [...errors, 'validation_error', 'unsupported_media_type'] as const

const routes = {
  list: defineRoute({
    method: 'get',
    path: base,
    operationId: 'automateScripts.list',
    summary: "The project's saved scripts",
    tags,
    permission: 'system/automate:read',
    responses: {
      200: jsonContent(z.object({ data: z.array(ScriptSchema) }), 'Scripts'),
      ...errorResponses('unauthorized', 'forbidden'),
    },
  }),
  get: defineRoute({
    method: 'get',
    path: `${base}/{scriptId}`,
    operationId: 'automateScripts.get',
    summary: 'One saved script',
    tags,
    permission: 'system/automate:read',
    request: { params: Id },
    responses: { 200: jsonContent(One, 'The script'), ...errorResponses(...errors) },
  }),
  create: defineRoute({
    method: 'post',
    path: base,
    operationId: 'automateScripts.create',
    summary: 'Save a script',
    tags,
    permission: 'system/automate:create',
    request: jsonBody(
      Body(
        'name (req, unique), description, code (req), allowed_hosts, max_cpu_ms 100-30000 (5000), max_memory_mb 1-256 (64)',
        { name: 'total', code: 'return { total: input.items.reduce((s, i) => s + i.price, 0) }' },
      ),
    ),
    responses: { 201: jsonContent(One, 'The script'), ...errorResponses(...writeErrors, 'conflict') },
  }),
  update: defineRoute({
    method: 'patch',
    path: `${base}/{scriptId}`,
    operationId: 'automateScripts.update',
    summary: 'Change a saved script',
    tags,
    permission: 'system/automate:update',
    request: {
      params: Id,
      ...jsonBody(
        Body('any of name, description, code, allowed_hosts, max_cpu_ms, max_memory_mb', { max_cpu_ms: 1000 }),
      ),
    },
    responses: { 200: jsonContent(One, 'The script'), ...errorResponses(...writeErrors, 'conflict') },
  }),
  delete: defineRoute({
    method: 'delete',
    path: `${base}/{scriptId}`,
    operationId: 'automateScripts.delete',
    summary: 'Delete a saved script',
    tags,
    permission: 'system/automate:delete',
    request: { params: Id },
    responses: { 200: jsonContent(z.object({ success: z.literal(true) }), 'Deleted'), ...errorResponses(...errors) },
  }),
  test: defineRoute({
    method: 'post',
    path: `${base}/{scriptId}/test`,
    operationId: 'automateScripts.test',
    summary: 'Run a saved script on mock data',
    tags,
    permission: 'system/automate:execute',
    request: {
      params: Id,
      body: {
        required: false,
        content: {
          'application/json': {
            schema: Body('input (object), context { trigger, steps, user }', { input: { items: [{ price: 2 }] } }),
          },
        },
      },
    },
    responses: {
      200: jsonContent(
        z.object({ data: ScriptTestResultSchema }),
        'The run: completed with output, or failed with the error code',
      ),
      ...errorResponses(...writeErrors),
    },
  }),
}

/** /api/v1/automate/scripts (automation spec "Scripts"); the /api/automate alias is mapped by the HTTP layer. */
export function scriptsRoutes(scripts: ScriptsService, security: Security) {
  const router = createRouter(security)
  router.openapi(routes.list, async (c) => c.json({ data: await scripts.list(principalOf(c)) }, 200))
  router.openapi(routes.get, async (c) =>
    c.json({ data: await scripts.get(principalOf(c), c.req.valid('param').scriptId) }, 200),
  )
  router.openapi(routes.create, async (c) =>
    c.json({ data: await scripts.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(routes.update, async (c) =>
    c.json({ data: await scripts.update(principalOf(c), c.req.valid('param').scriptId, c.req.valid('json')) }, 200),
  )
  router.openapi(routes.delete, async (c) => {
    await scripts.delete(principalOf(c), c.req.valid('param').scriptId)
    return c.json({ success: true as const }, 200)
  })
  router.openapi(routes.test, async (c) =>
    c.json(
      {
        data: await scripts.test(principalOf(c), c.req.valid('param').scriptId, c.req.valid('json'), c.req.raw.signal),
      },
      200,
    ),
  )
  return router
}
