import { sign, verify } from '../crypto/index.js'
import { AppError } from '../errors.js'
import { checkKey } from './keys.js'

/** Where Plinth itself serves the local driver's signed URLs (PUT, GET and HEAD). */
export const signedObjectPath = '/api/v1/storage/object'

/** S3's longest presigned lifetime; the local driver keeps the same bound. */
export const maxExpiresIn = 7 * 24 * 3600

// The signing key is derived from SECRET_KEY for this purpose alone (see lib/crypto/signing.ts).
const purpose = 'storage-url'

/** What a signed upload URL allows: one PUT of exactly `sizeBytes` bytes of `contentType`, until `expires`. */
export interface PutGrant {
  readonly method: 'PUT'
  readonly key: string
  readonly expires: number
  readonly sizeBytes: number
  readonly contentType: string
}

/** What a signed download URL allows: GET or HEAD until `expires`, with these response headers. */
export interface GetGrant {
  readonly method: 'GET'
  readonly key: string
  readonly expires: number
  readonly filename: string | null
  readonly contentType: string | null
}

export type SignedGrant = PutGrant | GetGrant

/** The query parameters a signed URL carries, as a route receives them. */
export type SignedQuery = Record<string, string | undefined>

/** An absolute signed URL for `grant` under `publicUrl`. Throws internal when the secret key is short. */
export function signObjectUrl(secretKey: string, publicUrl: string, grant: SignedGrant): string {
  const params = new URLSearchParams({ key: grant.key, expires: String(grant.expires) })
  if (grant.method === 'PUT') {
    params.set('size', String(grant.sizeBytes))
    params.set('type', grant.contentType)
  } else {
    if (grant.contentType !== null) params.set('type', grant.contentType)
    if (grant.filename !== null) params.set('name', grant.filename)
  }
  params.set('sig', sign(secretKey, purpose, payloadOf(grant)))
  return `${publicUrl.replace(/\/+$/, '')}${signedObjectPath}?${params.toString()}`
}

/**
 * The grant a signed URL's query carries, once its signature (constant-time) and expiry check out at
 * `nowSeconds`. HEAD is checked as GET. Throws forbidden: expired, tampered or incomplete.
 */
export function readSignedUrl(
  secretKey: string,
  method: 'GET' | 'PUT',
  query: SignedQuery,
  nowSeconds: number,
): SignedGrant {
  const { key, expires, sig } = query
  if (key === undefined || expires === undefined || sig === undefined || !/^\d{1,12}$/.test(expires))
    throw invalidSignature()
  const base = { key, expires: Number(expires) }
  let grant: SignedGrant
  if (method === 'PUT') {
    const { size, type } = query
    if (size === undefined || type === undefined || !/^\d{1,15}$/.test(size)) throw invalidSignature()
    grant = { method, ...base, sizeBytes: Number(size), contentType: type }
  } else {
    grant = { method, ...base, filename: query.name ?? null, contentType: query.type ?? null }
  }
  if (!verify(secretKey, purpose, payloadOf(grant), sig)) throw invalidSignature()
  if (nowSeconds > grant.expires)
    throw new AppError('forbidden', 'This signed URL has expired', { expiredAt: grant.expires })
  // Signed keys were checked when signed; checking again costs nothing and keeps the root closed.
  checkKey(grant.key)
  return grant
}

/** The signed string: every claim, JSON-encoded so no two grants share one. */
function payloadOf(grant: SignedGrant): string {
  return grant.method === 'PUT'
    ? JSON.stringify(['v1', 'PUT', grant.key, grant.expires, grant.sizeBytes, grant.contentType])
    : JSON.stringify(['v1', 'GET', grant.key, grant.expires, grant.filename, grant.contentType])
}

function invalidSignature(): AppError {
  return new AppError('forbidden', 'The signature of this URL is invalid')
}

/** Checks a presign lifetime: whole seconds from 1 to 7 days. Throws invalid_request. */
export function checkExpiresIn(expiresIn: unknown): number {
  if (typeof expiresIn !== 'number' || !Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > maxExpiresIn) {
    throw new AppError('invalid_request', `expiresIn must be whole seconds from 1 to ${maxExpiresIn}`)
  }
  return expiresIn
}
