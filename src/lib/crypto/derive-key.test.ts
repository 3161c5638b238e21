import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { deriveKey } from './derive-key.js'

const secret = 'k'.repeat(32)

describe('deriveKey', () => {
  it('gives the same 32 bytes for the same secret and purpose', () => {
    const key = deriveKey(secret, 'totp')
    expect(key).toHaveLength(32)
    expect(deriveKey(secret, 'totp').equals(key)).toBe(true)
  })

  it.each([
    ['another purpose', secret, 'storage-connections'],
    ['a purpose differing in case', secret, 'TOTP'],
    ['another secret', 'j'.repeat(32), 'totp'],
  ])('gives an independent key for %s', (_name, otherSecret, purpose) => {
    expect(deriveKey(otherSecret, purpose).equals(deriveKey(secret, 'totp'))).toBe(false)
  })

  it('counts the secret in bytes, not characters', () => {
    expect(deriveKey('é'.repeat(16), 'totp')).toHaveLength(32)
    expect(() => deriveKey('é'.repeat(15), 'totp')).toThrow(AppError)
  })

  it.each([
    ['a short secret', 'short-secret-value', 'totp'],
    ['an empty secret', '', 'totp'],
    ['an empty purpose', secret, ''],
    ['a missing secret', undefined as unknown as string, 'totp'],
  ])('refuses %s with internal, without echoing it', (_name, s, purpose) => {
    let err: unknown
    try {
      deriveKey(s, purpose)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('internal')
    if (s) expect((err as AppError).message).not.toContain(s)
  })
})
