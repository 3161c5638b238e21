import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { deriveKey } from './derive-key.js'
import { sign, verify } from './signing.js'

const secret = 'test-secret-key-of-at-least-32-bytes!'
const payload = 'files/avatar.png?exp=1700000000'

describe('sign / verify', () => {
  it('signs deterministically as 32 bytes of base64url', () => {
    const signature = sign(secret, 'file-url', payload)
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(sign(secret, 'file-url', payload)).toBe(signature)
  })

  it.each([
    ['a short payload', payload],
    ['an empty payload', ''],
    ['a unicode payload', 'résumé ✓'],
  ])('verifies its own signature for %s', (_name, p) => {
    expect(verify(secret, 'file-url', p, sign(secret, 'file-url', p))).toBe(true)
  })

  const good = sign(secret, 'file-url', payload)
  const flipped = good.slice(0, -1) + (good.endsWith('A') ? 'B' : 'A')
  it.each([
    ['another payload', secret, 'file-url', `${payload}0`, good],
    ['another purpose', secret, 'password-reset', payload, good],
    ['another secret key', 'another-secret-key-of-32-bytes-or-more', 'file-url', payload, good],
    ['a changed signature', secret, 'file-url', payload, flipped],
    ['a truncated signature', secret, 'file-url', payload, good.slice(0, -1)],
    ['a longer signature', secret, 'file-url', payload, `${good}A`],
    ['an empty signature', secret, 'file-url', payload, ''],
    ['a hex signature', secret, 'file-url', payload, Buffer.from(good, 'base64url').toString('hex')],
    ['a missing signature', secret, 'file-url', payload, undefined as unknown as string],
  ])('refuses %s', (_name, s, purpose, p, signature) => {
    expect(verify(s, purpose, p, signature)).toBe(false)
  })

  it('signs with a key of its own, not the secret box key of the same purpose', () => {
    const raw = createHmac('sha256', deriveKey(secret, 'totp')).update(payload).digest('base64url')
    expect(sign(secret, 'totp', payload)).not.toBe(raw)
  })

  it('refuses a short SECRET_KEY with internal', () => {
    expect(() => sign('short', 'file-url', payload)).toThrow(AppError)
    expect(() => verify('short', 'file-url', payload, good)).toThrow(AppError)
  })
})
