import { createHmac } from 'node:crypto'
import { safeEqual } from './tokens.js'

/** The header names of a signed outgoing webhook (automation spec "Outgoing signing"). */
export const signatureHeader = 'X-Service-Signature'
export const timestampHeader = 'X-Service-Timestamp'

/**
 * `sha256=<hex>`: the HMAC-SHA256 of the exact JSON body sent, keyed with the webhook's secret (the
 * secret as UTF-8, not derived: the receiver holds the same string). Throws nothing.
 */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`
}

/** The two signing headers for one dispatch: the signature of `body` and the ISO time of dispatch. */
export function webhookSignatureHeaders(secret: string, body: string, at: Date): Record<string, string> {
  return { [signatureHeader]: webhookSignature(secret, body), [timestampHeader]: at.toISOString() }
}

/** Whether `header` is the signature of `body` under `secret`, compared in constant time (what a receiver does). */
export function verifyWebhookSignature(secret: string, body: string, header: string | null | undefined): boolean {
  return typeof header === 'string' && safeEqual(webhookSignature(secret, body), header)
}
