import * as crypto from 'node:crypto'
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { AppError } from '../errors.js'

/** A random URL-safe token of `bytes` random bytes (base64url); throws internal on a bad size. */
export function randomToken(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024) {
    throw new AppError('internal', 'Token size must be a whole number of bytes from 1 to 1024')
  }
  return randomBytes(bytes).toString('base64url')
}

// The one-shot crypto.hash (Node 20.12+, 21.7+) skips the Hash object: this runs on every authenticated
// request to find the session by its token's hash.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash

/** The SHA-256 of a UTF-8 string as lower-case hex, e.g. to store a token by its hash. Throws nothing. */
export function sha256Hex(value: string): string {
  return oneShot ? oneShot('sha256', value, 'hex') : createHash('sha256').update(value, 'utf8').digest('hex')
}

/**
 * Compares two strings in constant time. Both sides are hashed first so the comparison runs over
 * equal-length digests: a length mismatch takes the same path as any other mismatch. Throws nothing.
 */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest()
  const db = createHash('sha256').update(b, 'utf8').digest()
  return timingSafeEqual(da, db)
}
