import { describe, expect, it } from 'vitest'
import { sign } from '../../lib/crypto/index.js'
import { isAppError } from '../../lib/errors.js'
import { decodeToken, encodeToken, type CapabilityClaims } from './token.js'

const secret = 'a'.repeat(64)
const claims: CapabilityClaims = {
  project: 'p1',
  collection: 'docs',
  id: 'rec_1',
  capability: 'comment',
  subject: 'u1',
  issuedAt: 1000,
  expiresAt: 1300,
}
const token = encodeToken(secret, claims)
const [prefix, payload, signature] = token.split('.') as [string, string, string]
const reencode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const original = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>

/** The error code decodeToken throws, or 'ok'. */
function outcome(candidate: string, now = 1000, key = secret): string {
  try {
    decodeToken(key, candidate, now)
    return 'ok'
  } catch (err) {
    if (!isAppError(err)) throw err
    return `${err.code}: ${err.message}`
  }
}

describe('capability token format', () => {
  it('is sct1.<base64url JSON>.<base64url HMAC> carrying project, collection, id, capability, subject, iat, exp', () => {
    expect(prefix).toBe('sct1')
    expect(original).toEqual({
      project: 'p1',
      collection: 'docs',
      id: 'rec_1',
      capability: 'comment',
      sub: 'u1',
      iat: 1000,
      exp: 1300,
    })
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(decodeToken(secret, token, 1000)).toEqual(claims)
  })

  it('is valid up to the second before exp, and expired from exp on', () => {
    expect(outcome(token, 1299)).toBe('ok')
    expect(outcome(token, 1300)).toBe('unauthorized: The capability token has expired')
    expect(outcome(token, 99_999)).toBe('unauthorized: The capability token has expired')
  })

  const invalid = 'unauthorized: Invalid capability token'
  const forged: [string, string][] = [
    ['another secret', encodeToken('b'.repeat(64), claims)],
    ['a changed capability, signature kept', `sct1.${reencode({ ...original, capability: 'write' })}.${signature}`],
    ['a later exp, signature kept', `sct1.${reencode({ ...original, exp: 99_999 })}.${signature}`],
    ['another record, signature kept', `sct1.${reencode({ ...original, id: 'rec_2' })}.${signature}`],
    [
      'one signature character changed',
      `${prefix}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`,
    ],
    ['no signature', `${prefix}.${payload}.`],
    ['no signature part', `${prefix}.${payload}`],
    ['another prefix', `sct2.${payload}.${signature}`],
    ['no prefix', `${payload}.${signature}`],
    ['empty', ''],
    ['just the prefix', 'sct1.'],
    ['far too long', `sct1.${'A'.repeat(5000)}.${signature}`],
  ]
  it.each(forged)('refuses %s with one message', (_, candidate) => {
    expect(outcome(candidate)).toBe(invalid)
  })

  it('refuses well-signed payloads that are not claims', () => {
    // Signed with the right key, so only the claim checks stand between them and use.
    const signedWith = (value: unknown) => {
      const signed = `sct1.${reencode(value)}`
      return `${signed}.${sign(secret, 'capability-tokens/v1', signed)}`
    }
    expect(outcome(signedWith(original))).toBe('ok')
    expect(outcome(signedWith({ ...original, capability: 'admin' }))).toBe(invalid)
    expect(outcome(signedWith({ ...original, exp: '1300' }))).toBe(invalid)
    expect(outcome(signedWith({ ...original, sub: '' }))).toBe(invalid)
    expect(outcome(signedWith([1, 2]))).toBe(invalid)
  })
})
