import { hkdfSync } from 'node:crypto'
import { AppError } from '../errors.js'

const minSecretBytes = 32
// A fixed, public salt: HKDF's extract step then separates Plinth's keys from any other use of SECRET_KEY.
const salt = 'plinth/hkdf/v1'

/**
 * A 32-byte key for one purpose, derived from the instance SECRET_KEY with HKDF-SHA256, so that one
 * secret yields independent keys per use. createSecretBox and sign prefix their purposes (`secret-box/…`,
 * `signing/…`) so their keys never coincide. Throws internal when the secret is under 32 bytes or the purpose is empty.
 */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  if (typeof secretKey !== 'string' || Buffer.byteLength(secretKey) < minSecretBytes) {
    throw new AppError('internal', `SECRET_KEY must be at least ${minSecretBytes} bytes`)
  }
  if (typeof purpose !== 'string' || purpose === '') throw new AppError('internal', 'A key purpose is required')
  return Buffer.from(hkdfSync('sha256', secretKey, salt, purpose, 32))
}
