import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { burnPasswordCheck, hashPassword, recommendedIterations, verifyPassword } from './password.js'

// Small counts keep the suite fast; the format is the same at any count.
const fast = 1000

describe('hashPassword / verifyPassword', () => {
  it.each([
    ['plain', 'correct horse battery staple'],
    ['empty', ''],
    ['unicode', 'pässwörd ✓ 密码'],
    ['dollar signs', '$pbkdf2_sha256$1$x$y$'],
    ['long', 'x'.repeat(10_000)],
  ])('round trips a %s password', async (_name, password) => {
    const stored = await hashPassword(password, fast)
    expect(await verifyPassword(password, stored, fast)).toEqual({ ok: true, needsRehash: false })
  })

  it('stores a self-describing value with a 16-byte salt and a 32-byte key, never the password', async () => {
    const stored = await hashPassword('hunter2-secret', fast)
    expect(stored).toMatch(/^pbkdf2_sha256\$1000\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
    expect(stored).not.toContain('hunter2')
  })

  it('uses a fresh salt for every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same', fast), hashPassword('same', fast)])
    expect(a).not.toBe(b)
  })

  it.each([
    ['a different password', 'correct horse battery stapler'],
    ['a different case', 'Correct horse battery staple'],
    ['a prefix', 'correct horse'],
    ['empty', ''],
  ])('refuses %s', async (_name, attempt) => {
    const stored = await hashPassword('correct horse battery staple', fast)
    expect(await verifyPassword(attempt, stored, fast)).toEqual({ ok: false, needsRehash: false })
  })

  it('treats canonically equivalent Unicode spellings as the same password', async () => {
    const stored = await hashPassword('caf\u00e9', fast)
    expect((await verifyPassword('cafe\u0301', stored, fast)).ok).toBe(true)
  })

  it.each([
    ['stored below the current count', 1000, 2000, true],
    ['stored at the current count', 1000, 1000, false],
    ['stored above the current count', 2000, 1000, false],
  ])('needsRehash when %s', async (_name, storedCount, currentCount, needsRehash) => {
    const stored = await hashPassword('pw', storedCount)
    expect(await verifyPassword('pw', stored, currentCount)).toEqual({ ok: true, needsRehash })
  })

  it('never asks to rehash on a wrong password', async () => {
    const stored = await hashPassword('pw', 1000)
    expect(await verifyPassword('nope', stored, 2000)).toEqual({ ok: false, needsRehash: false })
  })

  it('a stored hash that was edited no longer verifies', async () => {
    const stored = await hashPassword('pw', fast)
    const parts = stored.split('$')
    const hash = Buffer.from(parts[3] ?? '', 'base64')
    hash[0] = (hash[0] ?? 0) ^ 1
    const edited = [parts[0], parts[1], parts[2], hash.toString('base64')].join('$')
    expect(await verifyPassword('pw', edited, fast)).toEqual({ ok: false, needsRehash: false })
    // Lowering the stored count changes the derived key too.
    expect(await verifyPassword('pw', stored.replace('$1000$', '$999$'), fast)).toEqual({
      ok: false,
      needsRehash: false,
    })
  })

  const salt = Buffer.alloc(16, 1).toString('base64')
  const key = Buffer.alloc(32, 2).toString('base64')
  it.each([
    ['empty', ''],
    ['garbage', 'not a hash'],
    ['another scheme', `bcrypt$1000$${salt}$${key}`],
    ['zero iterations', `pbkdf2_sha256$0$${salt}$${key}`],
    ['negative iterations', `pbkdf2_sha256$-5$${salt}$${key}`],
    ['leading zero', `pbkdf2_sha256$01000$${salt}$${key}`],
    ['fractional iterations', `pbkdf2_sha256$1000.5$${salt}$${key}`],
    ['absurd iterations', `pbkdf2_sha256$99999999999$${salt}$${key}`],
    ['iterations over the cap', `pbkdf2_sha256$10000001$${salt}$${key}`],
    ['missing hash', `pbkdf2_sha256$1000$${salt}`],
    ['extra segment', `pbkdf2_sha256$1000$${salt}$${key}$x`],
    ['bad base64 salt', `pbkdf2_sha256$1000$!!!!$${key}`],
    ['empty salt', `pbkdf2_sha256$1000$$${key}`],
    ['short salt', `pbkdf2_sha256$1000$${Buffer.alloc(8).toString('base64')}$${key}`],
    ['short hash', `pbkdf2_sha256$1000$${salt}$${Buffer.alloc(16).toString('base64')}`],
    ['null', null as unknown as string],
    ['a number', 42 as unknown as string],
  ])('a malformed stored value (%s) verifies false without throwing', async (_name, stored) => {
    await expect(verifyPassword('pw', stored, fast)).resolves.toEqual({ ok: false, needsRehash: false })
  })

  it.each([0, -1, 1.5, Number.NaN, Infinity, 20_000_000])('refuses to hash with %s iterations', async (iterations) => {
    const err = await hashPassword('pw', iterations).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('internal')
    expect((err as AppError).message).not.toContain('pw')
  })

  it('hashes at the recommended count in the same format', async () => {
    expect(recommendedIterations).toBe(600_000)
    expect(await hashPassword('pw', recommendedIterations)).toMatch(/^pbkdf2_sha256\$600000\$[^$]{24}\$[^$]{44}$/)
  })
})

describe('burnPasswordCheck', () => {
  it.each([fast, 0, -3, Number.NaN])('resolves with nothing for %s iterations', async (iterations) => {
    // NaN falls back to the recommended count, which is the slow path a real check would take.
    await expect(burnPasswordCheck('whatever', iterations)).resolves.toBeUndefined()
  })
})
