import { pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import { AppError } from '../errors.js'

const pbkdf2Async = promisify(pbkdf2)

/** OWASP's current recommendation for PBKDF2-HMAC-SHA256. */
export const recommendedIterations = 600_000

const scheme = 'pbkdf2_sha256'
const saltBytes = 16
const keyBytes = 32
// Guards against a corrupted or hostile stored count turning one login into minutes of CPU.
const maxIterations = 10_000_000
const base64 = /^[A-Za-z0-9+/]+={0,2}$/

export interface PasswordCheck {
  ok: boolean
  /** True when the password matched but was hashed with fewer iterations than asked for now. */
  needsRehash: boolean
}

/** Hashes a password into `pbkdf2_sha256$<iterations>$<salt>$<hash>`; throws internal on a bad iteration count. */
export async function hashPassword(password: string, iterations: number): Promise<string> {
  assertIterations(iterations)
  const salt = randomBytes(saltBytes)
  const hash = await derive(password, salt, iterations)
  return `${scheme}$${iterations}$${salt.toString('base64')}$${hash.toString('base64')}`
}

/**
 * Checks a password against a stored hash in constant time. Never throws: a malformed stored value
 * (or none, for accounts without a password) is false after the same work as a real check.
 */
export async function verifyPassword(
  password: string,
  stored: string,
  currentIterations: number,
): Promise<PasswordCheck> {
  const parsed = parseStored(stored)
  if (!parsed) {
    await burnPasswordCheck(password, clampIterations(currentIterations))
    return { ok: false, needsRehash: false }
  }
  const candidate = await derive(password, parsed.salt, parsed.iterations)
  const ok = timingSafeEqual(candidate, parsed.hash)
  return { ok, needsRehash: ok && parsed.iterations < currentIterations }
}

/** Spends the time of a verify for an unknown account, so response times do not reveal which accounts exist. Throws nothing. */
export async function burnPasswordCheck(password: string, iterations: number): Promise<void> {
  const candidate = await derive(password, randomBytes(saltBytes), clampIterations(iterations))
  // The comparison is part of a real verify; keep it so the two stay alike.
  timingSafeEqual(candidate, Buffer.alloc(keyBytes))
}

// NFC so that the same password typed on different keyboards or systems hashes the same.
function derive(password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return pbkdf2Async(password.normalize('NFC'), salt, iterations, keyBytes, 'sha256')
}

function parseStored(stored: unknown): { iterations: number; salt: Buffer; hash: Buffer } | null {
  if (typeof stored !== 'string') return null
  const [name, count, salt64, hash64, ...rest] = stored.split('$')
  if (name !== scheme || rest.length > 0 || count === undefined || salt64 === undefined || hash64 === undefined)
    return null
  if (!/^[1-9]\d{0,9}$/.test(count)) return null
  const iterations = Number(count)
  if (iterations > maxIterations) return null
  if (!base64.test(salt64) || !base64.test(hash64)) return null
  const salt = Buffer.from(salt64, 'base64')
  const hash = Buffer.from(hash64, 'base64')
  if (salt.length !== saltBytes || hash.length !== keyBytes) return null
  return { iterations, salt, hash }
}

function assertIterations(iterations: number): void {
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > maxIterations) {
    throw new AppError('internal', `Password iterations must be a whole number from 1 to ${maxIterations}`)
  }
}

function clampIterations(iterations: number): number {
  return Number.isInteger(iterations) ? Math.min(Math.max(iterations, 1), maxIterations) : recommendedIterations
}
