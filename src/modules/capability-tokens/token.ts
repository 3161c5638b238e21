import { AppError } from '../../lib/errors.js'
import { sign, verify } from '../../lib/crypto/index.js'

export const tokenPrefix = 'sct1.'
export const capabilities = ['read', 'comment', 'write'] as const
export type Capability = (typeof capabilities)[number]

/** What a capability token says, signed: who may do what to which record, until when. */
export interface CapabilityClaims {
  readonly project: string
  readonly collection: string
  readonly id: string
  readonly capability: Capability
  /** The user the token acts for. */
  readonly subject: string
  /** Unix seconds. */
  readonly issuedAt: number
  /** Unix seconds; the token is refused from this second on. */
  readonly expiresAt: number
}

// The signing key is derived from SECRET_KEY for this purpose alone (lib/crypto sign → HKDF).
const purpose = 'capability-tokens/v1'
// A token is a few hundred characters; anything much longer is not one of ours and is refused unread.
const maxTokenLength = 2048

/** `sct1.<base64url JSON claims>.<base64url HMAC-SHA256 of "sct1.<claims>">`. Throws internal on a short secret. */
export function encodeToken(secretKey: string, claims: CapabilityClaims): string {
  const payload = Buffer.from(
    JSON.stringify({
      project: claims.project,
      collection: claims.collection,
      id: claims.id,
      capability: claims.capability,
      sub: claims.subject,
      iat: claims.issuedAt,
      exp: claims.expiresAt,
    }),
    'utf8',
  ).toString('base64url')
  const signed = `${tokenPrefix}${payload}`
  return `${signed}.${sign(secretKey, purpose, signed)}`
}

/**
 * The claims of a token this instance (or one sharing its SECRET_KEY) signed, once its signature checks
 * (compared in constant time) and it has not expired at `now`. Throws unauthorized for anything else,
 * with one message for every kind of forgery so a caller learns nothing about what was wrong.
 */
export function decodeToken(secretKey: string, token: string, now: number): CapabilityClaims {
  const invalid = () => new AppError('unauthorized', 'Invalid capability token')
  if (typeof token !== 'string' || token.length > maxTokenLength || !token.startsWith(tokenPrefix)) throw invalid()
  const dot = token.lastIndexOf('.')
  if (dot <= tokenPrefix.length) throw invalid()
  const signed = token.slice(0, dot)
  if (!verify(secretKey, purpose, signed, token.slice(dot + 1))) throw invalid()
  const claims = parseClaims(signed.slice(tokenPrefix.length))
  if (!claims) throw invalid()
  if (now >= claims.expiresAt) throw new AppError('unauthorized', 'The capability token has expired')
  return claims
}

function parseClaims(payload: string): CapabilityClaims | null {
  let raw: unknown
  try {
    raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null
  const r = raw as Record<string, unknown>
  const strings = [r.project, r.collection, r.id, r.sub]
  if (!strings.every((s) => typeof s === 'string' && s !== '')) return null
  if (!(capabilities as readonly unknown[]).includes(r.capability)) return null
  if (!Number.isSafeInteger(r.iat) || !Number.isSafeInteger(r.exp)) return null
  return {
    project: r.project as string,
    collection: r.collection as string,
    id: r.id as string,
    capability: r.capability as Capability,
    subject: r.sub as string,
    issuedAt: r.iat as number,
    expiresAt: r.exp as number,
  }
}
