import { AppError } from '../../../lib/errors.js'
import { clientIp, createRouter, defineRoute, errorResponses, jsonContent, z } from '../../../lib/http/index.js'
import { IdempotencyHeaders, replayedHeaders } from '../idempotency.js'
import type { TriggerInput } from '../model.js'
import { httpMethods } from './config-fields.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { liveFlow } from './match.js'
import { requestInput } from './request-input.js'
import { ipAllowed, parseEntry, secretMatches } from './webhook-access.js'

/** One call of a webhook URL, as the route read it. */
export interface WebhookCall {
  readonly token: string
  readonly method: string
  /** The client's address (clientIp: the socket, or X-Forwarded-For under TRUST_PROXY). */
  readonly ip: string
  readonly authorization: string | undefined
  /** An Idempotency-Key: a repeat within 24 h answers the first call's run. */
  readonly idempotencyKey?: string
  /** Reads `$trigger.body` (request-input.ts); called only once the call passed every check. */
  readonly input: () => Promise<unknown>
}

/**
 * Starts a run of the active webhook flow with this token. Checks, in order: the token names an active
 * webhook flow (404 not_found), the caller's IP is in `ip_allowlist` when there is one (403 forbidden),
 * the shared secret when `require_auth` (401 unauthorized), the method is in `allowed_methods` (405
 * method_not_allowed). No run starts when a check fails. The run has no initiator: runAs triggering_user
 * falls back to the webhook role (the engine resolves it).
 */
export async function callWebhook(
  deps: Pick<TriggerDeps, 'flows' | 'runs'>,
  call: WebhookCall,
): Promise<{ runId: string; repeated?: boolean }> {
  const live = liveFlow(await deps.flows.byWebhookToken(call.token), 'webhook', webhookConfig)
  if (!live) throw new AppError('not_found', 'No active webhook flow has this URL')
  const { config } = live
  if (!ipAllowed(call.ip, config.ip_allowlist)) throw new AppError('forbidden', 'This address may not call the webhook')
  if (config.require_auth && !secretMatches(call.authorization, config.secret)) {
    throw new AppError(
      'unauthorized',
      'The webhook secret is missing or wrong: send it in Authorization as "Bearer <secret>" or bare',
      {},
      { headers: { 'WWW-Authenticate': 'Bearer' } },
    )
  }
  if (!(config.allowed_methods as readonly string[]).includes(call.method)) {
    const allow = config.allowed_methods.join(', ')
    throw new AppError(
      'method_not_allowed',
      `This webhook accepts ${allow}`,
      { allowed: config.allowed_methods },
      { headers: { Allow: allow } },
    )
  }
  const trigger: TriggerInput = {
    type: 'webhook',
    event: null,
    collection: null,
    method: call.method,
    body: await call.input(),
  }
  const started = await deps.runs.start(live.flow, trigger, null, { idempotencyKey: call.idempotencyKey })
  return { runId: started.runId, repeated: started.repeated }
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const
const Accepted = z.object({ success: z.literal(true), runId: z.string(), message: z.string() })
const routes = methods.map((method) =>
  defineRoute({
    method,
    path: '/api/v1/automate/webhook/{token}',
    operationId: `automateWebhook.${method}`,
    tags: ['Automation'],
    summary:
      method === 'get'
        ? 'Start a webhook flow: the query parameters are $trigger.body'
        : 'Start a webhook flow: the body is $trigger.body',
    permission: null,
    request: { params: z.object({ token: z.string().min(1).max(200) }), headers: IdempotencyHeaders },
    responses: {
      202: jsonContent(Accepted, 'The run started'),
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

/** The webhook trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const webhookConfig = z
  .object({
    allowed_methods: z.array(z.enum(httpMethods)).min(1).default(['POST']),
    require_auth: z.boolean().default(false),
    /** The shared secret (a credential: masked on reads, restored on write). */
    secret: z.string().min(1).max(500).optional(),
    /** Addresses or CIDR ranges allowed to call; empty allows any. */
    ip_allowlist: z
      .array(
        z
          .string()
          .min(1)
          .max(64)
          .refine(
            (entry) => parseEntry(entry) !== null,
            'must be an IP address or a CIDR range such as 203.0.113.0/24',
          ),
      )
      .max(100)
      .default([]),
  })
  .strict()

/**
 * webhook: the public URL `/api/v1/automate/webhook/:token` (and the `/api/automate` alias, mapped by the
 * HTTP layer), any of GET POST PUT PATCH DELETE, answering 202 `{ success, runId, message }`.
 */
export const webhook = defineTrigger({
  type: 'webhook',
  label: 'Webhook',
  blocking: false,
  configSchema: webhookConfig,
  start(deps) {
    return {
      routers() {
        const router = createRouter()
        for (const route of routes) {
          router.openapi(route, async (c) => {
            const started = await callWebhook(deps, {
              token: c.req.valid('param').token,
              method: c.req.method,
              ip: clientIp(c, deps.trustProxy),
              authorization: c.req.header('authorization'),
              idempotencyKey: c.req.valid('header')['idempotency-key'],
              input: () => requestInput(c),
            })
            return c.json(
              { success: true as const, runId: started.runId, message: 'Flow execution started' },
              202,
              replayedHeaders(started),
            )
          })
        }
        return [router]
      },
    }
  },
})
