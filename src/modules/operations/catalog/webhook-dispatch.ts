import { z } from 'zod'
import { signatureHeader, timestampHeader, webhookSignatureHeaders } from '../../../lib/crypto/index.js'
import { headers, send, timeoutMs, url } from '../outbound-step.js'
import { text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'
import { retryableStatus } from '../service-call.js'

const ours = new Set([signatureHeader.toLowerCase(), timestampHeader.toLowerCase(), 'content-type'])

// Answers worth sending again: the receiver's trouble, not a refusal of this payload.

/**
 * POSTs a JSON payload (the trigger's body unless given) through lib/outbound; with a `secret`, signed:
 * `X-Service-Signature: sha256=<hex HMAC-SHA256 of the exact body sent>` and `X-Service-Timestamp` (ISO
 * time of dispatch), the same signature collection webhooks carry. A receiver that does not answer 2xx
 * fails the step (`webhook_failed`; retried by onError retry when the answer was 5xx, 408 or 429).
 */
export const webhookDispatch = defineOperation({
  type: 'webhook_dispatch',
  category: 'network',
  label: 'Webhook dispatch',
  description:
    'POSTs a JSON payload (default: the trigger body), signed with X-Service-Signature and X-Service-Timestamp when a secret is set; output { status, durationMs, signed }.',
  effects: 'writes',
  configSchema: z.strictObject({
    url: url(),
    payload: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('The JSON object to send (default: the trigger body)'),
    headers: headers().optional(),
    // A credential: masked in step logs, exports and flow reads (flows/masking.ts).
    secret: text(1_000).optional().describe('Signs the payload (HMAC-SHA256) when set'),
    timeout_ms: timeoutMs(),
  }),
  async run(config, ctx) {
    const payload = config.payload ?? (ctx.data.$trigger as { body?: unknown } | undefined)?.body ?? {}
    const body = JSON.stringify(payload)
    const given: Record<string, string> = {}
    // The signature headers are ours: a configured header of the same name would contradict them.
    for (const [name, value] of Object.entries(config.headers ?? {})) {
      if (!ours.has(name.toLowerCase())) given[name] = value
    }
    const signed = typeof config.secret === 'string' && config.secret !== ''
    const signing = signed ? webhookSignatureHeaders(config.secret!, body, new Date(ctx.clock.now())) : {}
    const started = performance.now()
    const res = await send(ctx, config.url, {
      method: 'POST',
      headers: { ...given, 'content-type': 'application/json', ...signing },
      body,
      timeoutMs: config.timeout_ms,
    })
    const durationMs = Math.round(performance.now() - started)
    if (res.status < 200 || res.status > 299) {
      throw new StepError(
        'webhook_failed',
        `The receiver answered ${res.status}`,
        { status: res.status, durationMs },
        502,
        retryableStatus(res.status),
      )
    }
    return { status: res.status, durationMs, signed }
  },
})
