import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { createSecretBox } from './secret-box.js'

const secret = 'test-secret-key-of-at-least-32-bytes!'
const box = createSecretBox(secret, 'totp')

function openError(sealed: string, with_ = box): AppError {
  try {
    with_.open(sealed)
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    return err as AppError
  }
  throw new Error('expected open to fail')
}

// Flips one bit of one decoded part and re-encodes it, so the change is in the bytes, not the spelling.
function flip(sealed: string, part: 1 | 2 | 3, at = 0): string {
  const parts = sealed.split('.')
  const bytes = Buffer.from(parts[part] ?? '', 'base64url')
  bytes[at] = (bytes[at] ?? 0) ^ 0x01
  parts[part] = bytes.toString('base64url')
  return parts.join('.')
}

// One byte is two base64url characters whose last 4 bits are padding: setting one decodes to the same byte.
function nonCanonical(oneByte: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(oneByte.at(-1) ?? 'A')
  return oneByte.slice(0, -1) + alphabet[last | 1]
}

describe('createSecretBox', () => {
  it.each([
    ['empty', ''],
    ['ascii', 'JBSWY3DPEHPK3PXP'],
    ['unicode', 'clé secrète ✓ 秘密'],
    ['with dots', 'a.b.c.d'],
    ['long', 'x'.repeat(100_000)],
  ])('round trips a %s secret', (_name, plaintext) => {
    expect(box.open(box.seal(plaintext))).toBe(plaintext)
  })

  it('seals into v1.<12-byte iv>.<16-byte tag>.<ciphertext>, base64url, without the plaintext', () => {
    const sealed = box.seal('JBSWY3DPEHPK3PXP')
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/)
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP')
  })

  it('uses a fresh IV every time', () => {
    const a = box.seal('same')
    const b = box.seal('same')
    expect(a).not.toBe(b)
    expect(a.split('.')[1]).not.toBe(b.split('.')[1])
  })

  it('opens values sealed by another box with the same secret and purpose', () => {
    expect(createSecretBox(secret, 'totp').open(box.seal('shared'))).toBe('shared')
  })

  it.each([
    ['iv', 1 as const, 0],
    ['iv, last byte', 1 as const, 11],
    ['tag', 2 as const, 0],
    ['tag, last byte', 2 as const, 15],
    ['ciphertext', 3 as const, 0],
    ['ciphertext, last byte', 3 as const, 15],
  ])('refuses a tampered %s', (_name, part, at) => {
    const sealed = box.seal('sixteen byte pt!')
    const err = openError(flip(sealed, part, at))
    expect(err.code).toBe('internal')
  })

  it.each([
    ['another purpose', createSecretBox(secret, 'storage-connections')],
    ['another secret key', createSecretBox('another-secret-key-of-32-bytes-or-more', 'totp')],
  ])('refuses a value sealed under %s', (_name, other) => {
    const sealed = other.seal('foreign secret')
    const err = openError(sealed)
    expect(err.code).toBe('internal')
    expect(err.message).not.toContain(sealed)
    expect(err.message).not.toContain('foreign secret')
    expect(JSON.stringify(err.details)).toBe('{}')
  })

  it('refuses a truncated ciphertext and a swapped tag', () => {
    const a = box.seal('first secret').split('.')
    const b = box.seal('other secret').split('.')
    expect(openError([a[0], a[1], a[2], (a[3] ?? '').slice(0, -2)].join('.')).code).toBe('internal')
    expect(openError([a[0], a[1], b[2], a[3]].join('.')).code).toBe('internal')
  })

  const valid = box.seal('x').split('.')
  const [, iv = '', tag = '', ct = ''] = valid
  it.each([
    ['empty', ''],
    ['garbage', 'not sealed'],
    ['version only', 'v1'],
    ['another version', `v2.${iv}.${tag}.${ct}`],
    ['upper-case version', `V1.${iv}.${tag}.${ct}`],
    ['a missing part', `v1.${iv}.${tag}`],
    ['an extra part', `v1.${iv}.${tag}.${ct}.x`],
    ['standard base64 characters', `v1.${iv}.${tag}.${ct}+/`],
    ['padding', `v1.${iv}.${tag}.${ct}==`],
    ['a non-canonical spelling', `v1.${iv}.${tag}.${nonCanonical(ct)}`],
    ['a short iv', `v1.${Buffer.alloc(8).toString('base64url')}.${tag}.${ct}`],
    ['a short tag', `v1.${iv}.${Buffer.alloc(8).toString('base64url')}.${ct}`],
    ['an empty tag', `v1.${iv}..${ct}`],
    ['null', null as unknown as string],
  ])('refuses a malformed value (%s) with internal', (_name, sealed) => {
    const err = openError(sealed)
    expect(err.code).toBe('internal')
    if (sealed) expect(err.message).not.toContain(sealed)
  })

  it('refuses a spelling that decodes to the very same bytes', () => {
    expect(Buffer.from(nonCanonical(ct), 'base64url').equals(Buffer.from(ct, 'base64url'))).toBe(true)
    expect(openError(`v1.${iv}.${tag}.${nonCanonical(ct)}`).code).toBe('internal')
  })

  it('refuses a short SECRET_KEY when created', () => {
    expect(() => createSecretBox('too-short', 'totp')).toThrow(AppError)
  })
})
