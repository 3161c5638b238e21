import { Secret, TOTP } from 'otpauth'

const period = 30
const digits = 6

/** A new TOTP secret, base32 (RFC 6238 with SHA-1, 6 digits, 30 s: what every authenticator app reads). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32
}

/** The otpauth:// URI an authenticator app scans. */
export function totpUri(secretBase32: string, account: string, issuer: string): string {
  return totp(secretBase32, account, issuer).toString()
}

/**
 * The time step of a valid code (one step of clock drift either way), or null. A step at or before
 * `lastStep` is refused, so a code cannot be replayed within its window.
 */
export function checkTotp(secretBase32: string, code: string, nowMs: number, lastStep: number | null): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const delta = totp(secretBase32, 'account', 'Plinth').validate({ token: code, timestamp: nowMs, window: 1 })
  if (delta === null) return null
  const step = Math.floor(nowMs / 1000 / period) + delta
  if (lastStep !== null && step <= lastStep) return null
  return step
}

/** The current code for a secret (used by tests and by nothing else). */
export function currentTotp(secretBase32: string, nowMs: number): string {
  return totp(secretBase32, 'account', 'Plinth').generate({ timestamp: nowMs })
}

function totp(secretBase32: string, label: string, issuer: string): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits, period, secret: Secret.fromBase32(secretBase32) })
}
