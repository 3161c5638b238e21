import { createHmac } from 'node:crypto'
import { z } from 'zod'
import { safeEqual } from '../../lib/crypto/index.js'

/** The headers of a signed delivery receipt (decision 037). */
export const receiptSignatureHeader = 'X-Email-Signature'
export const receiptTimestampHeader = 'X-Email-Timestamp'

/** How far a receipt's timestamp may be from the server's clock, either way. */
export const receiptWindowSeconds = 300

/** `sha256=<hex>`: HMAC-SHA256 under the shared secret of `<timestamp>.<raw body>`. Throws nothing. */
export function receiptSignature(secret: string, timestamp: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex')}`
}

/**
 * Whether a receipt is genuine and fresh: a timestamp of whole Unix seconds within the window of `nowSeconds`,
 * and a signature over it and the exact body, compared in constant time. Throws nothing.
 */
export function receiptIsGenuine(
  secret: string,
  rawBody: string,
  timestamp: string | undefined,
  signature: string | undefined,
  nowSeconds: number,
): boolean {
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(timestamp)) return false
  // Both checks always run, so the time taken says nothing about which one failed.
  const fresh = Math.abs(nowSeconds - Number(timestamp)) <= receiptWindowSeconds
  const signed = safeEqual(receiptSignature(secret, timestamp, rawBody), signature)
  return fresh && signed
}

const Receipt = z.object({
  messageId: z.string().min(1).max(998),
  recipient: z.string().min(3).max(254).optional(),
  status: z.string().min(1).max(50),
})

/** A receipt body: one receipt, or a list of at most 100. */
export const ReceiptBody = z.union([Receipt, z.array(Receipt).min(1).max(100)])
export type Receipt = z.infer<typeof Receipt>
