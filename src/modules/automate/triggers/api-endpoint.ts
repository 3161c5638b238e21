import { AppError } from '../../../lib/errors.js'
import { createRouter, defineRoute, errorResponses, jsonContent, z } from '../../../lib/http/index.js'
import type { Principal } from '../../../lib/principal.js'
import { IdempotencyHeaders, replayedHeaders } from '../idempotency.js'
import type { TriggerInput } from '../model.js'
import { httpMethods } from './config-fields.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { flowForCall } from './flow-for-call.js'
import { requestInput } from './request-input.js'

/**
 * Starts an api_endpoint flow for a call of `/api/v1/automate/endpoint/:flowId`. The caller was resolved
 * by the app's authentication (anonymous without a credential; the flow is looked up in the caller's
 * project, or the project an anonymous caller names with X-Project-Id). With `require_auth` (the default)
 * the caller needs system/automate:execute (401 anonymous, 403 without it); the method must be the
 * configured one (405 method_not_allowed). The run is initiated by the caller, or by nobody when anonymous.
 * Throws not_found, conflict (not an api_endpoint flow, not active), unauthorized, forbidden,
 * method_not_allowed, invalid_request (malformed JSON) and what RunStarter.start throws.
 */
export async function callEndpoint(
  deps: Pick<TriggerDeps, 'flows' | 'runs' | 'authorize'>,
  principal: Principal,
  call: { flowId: string; method: string; input: () => Promise<unknown>; idempotencyKey?: string },
) {
  const live = flowForCall(
    await deps.flows.byId(principal.projectId, call.flowId),
    'api_endpoint',
    apiEndpointConfig,
    call.flowId,
  )
  if (live.config.require_auth) await deps.authorize(principal, 'system/automate:execute')
  if (call.method !== live.config.method) {
    throw new AppError(
      'method_not_allowed',
      `This endpoint accepts ${live.config.method}`,
      { allowed: [live.config.method] },
      { headers: { Allow: live.config.method } },
    )
  }
  const trigger: TriggerInput = {
    type: 'api_endpoint',
    event: null,
    collection: null,
    method: call.method,
    body: await call.input(),
  }
  const started = await deps.runs.start(live.flow, trigger, principal.kind === 'anonymous' ? null : principal, {
    idempotencyKey: call.idempotencyKey,
  })
  return {
    runId: started.runId,
    flowId: call.flowId,
    status: started.status,
    startedAt: started.startedAt,
    ...(started.repeated ? { repeated: true as const } : {}),
  }
}

const Started = z.object({
  data: z.object({
    runId: z.string(),
    flowId: z.string(),
    status: z.string(),
    startedAt: z.string(),
    repeated: z.literal(true).optional(),
  }),
})
const methods = ['get', 'post', 'put', 'patch', 'delete'] as const
const routes = methods.map((method) =>
  defineRoute({
    method,
    path: '/api/v1/automate/endpoint/{flowId}',
    operationId: `automateEndpoint.${method}`,
    tags: ['Automation'],
    summary: 'Start an api_endpoint flow (the flow decides: require_auth, by default, needs system/automate:execute)',
    // The flow's require_auth decides, so the handler authenticates itself rather than the route's guard.
    permission: null,
    request: { params: z.object({ flowId: z.string().min(1).max(64) }), headers: IdempotencyHeaders },
    responses: {
      202: jsonContent(Started, 'The run started'),
      ...errorResponses(
        'invalid_request',
        'unauthorized',
        'forbidden',
        'not_found',
        'method_not_allowed',
        'conflict',
        'quota_exceeded',
        'rate_limited',
        'too_many_requests',
      ),
    },
  }),
)

/** The api_endpoint trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const apiEndpointConfig = z
  .object({ method: z.enum(httpMethods).default('POST'), require_auth: z.boolean().default(true) })
  .strict()

/** api_endpoint: a flow called as an API, with its method; 202 with the run. */
export const apiEndpoint = defineTrigger({
  type: 'api_endpoint',
  label: 'API endpoint',
  blocking: false,
  configSchema: apiEndpointConfig,
  start(deps) {
    return {
      routers(guards) {
        const router = createRouter()
        for (const route of routes) {
          router.openapi(route, async (c) => {
            const principal = await guards.security.authenticate(c)
            const data = await callEndpoint(deps, principal, {
              flowId: c.req.valid('param').flowId,
              method: c.req.method,
              input: () => requestInput(c),
              idempotencyKey: c.req.valid('header')['idempotency-key'],
            })
            return c.json({ data }, 202, replayedHeaders(data))
          })
        }
        return [router]
      },
    }
  },
})
