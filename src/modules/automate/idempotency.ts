import { z } from '../../lib/http/index.js'

/**
 * The `Idempotency-Key` request header of execute, webhook and api_endpoint calls (decision 054, beyond
 * the spec, as payment APIs have it): 1–255 visible ASCII characters, anything else 400 invalid_request.
 * A repeat within 24 h answers the first call's run, with `Idempotent-Replayed: true`.
 */
export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1 to 255 visible ASCII characters')
    .optional()
    .openapi({
      description:
        "A repeat of this key within 24 h answers the first call's run instead of starting another (response header Idempotent-Replayed: true)",
    }),
})

/** The answer's headers for a start that a repeated key answered. */
export function replayedHeaders(started: { repeated?: boolean }): Record<string, string> {
  return started.repeated ? { 'Idempotent-Replayed': 'true' } : {}
}
