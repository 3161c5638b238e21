import { createHmac } from 'node:crypto'
import { deriveKey } from './derive-key.js'
import { safeEqual } from './tokens.js'

/**
 * HMAC-SHA256 of a short payload (signed URLs, stateless tokens) under a key derived for `purpose`,
 * as base64url. Throws internal when the secret key is under 32 bytes or the purpose is empty.
 */
export function sign(secretKey: string, purpose: string, payload: string): string {
  return createHmac('sha256', deriveKey(secretKey, `signing/${purpose}`))
    .update(payload, 'utf8')
    .digest('base64url')
}

/** Whether `signature` is the signature of `payload` for `purpose`, compared in constant time; throws internal like sign. */
export function verify(secretKey: string, purpose: string, payload: string, signature: string): boolean {
  const expected = sign(secretKey, purpose, payload)
  return typeof signature === 'string' && safeEqual(expected, signature)
}
