import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { randomToken, safeEqual, sha256Hex } from './tokens.js'

describe('randomToken', () => {
  it.each([
    [undefined, 43],
    [16, 22],
    [1, 2],
    [64, 86],
  ])('%s bytes give a base64url token of %i characters', (bytes, length) => {
    const token = randomToken(bytes)
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(token).toHaveLength(length)
  })

  it('does not repeat', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => randomToken()))
    expect(tokens.size).toBe(1000)
  })

  it.each([0, -1, 1.5, Number.NaN, 1025])('refuses %s bytes', (bytes) => {
    expect(() => randomToken(bytes)).toThrow(AppError)
  })
})

describe('sha256Hex', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['The quick brown fox jumps over the lazy dog', 'd7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592'],
    // UTF-8 bytes c3 a9, not the Latin-1 byte e9.
    ['é', '4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c'],
  ])('hashes %j', (value, hex) => {
    expect(sha256Hex(value)).toBe(hex)
  })
})

describe('safeEqual', () => {
  it.each([
    ['equal', 'token-abc', 'token-abc', true],
    ['both empty', '', '', true],
    ['equal unicode', 'größe✓', 'größe✓', true],
    ['one character off', 'token-abc', 'token-abd', false],
    ['a prefix', 'token-abc', 'token-ab', false],
    ['longer', 'token-abc', 'token-abcd', false],
    ['empty against non-empty', '', 'x', false],
    ['case', 'Token', 'token', false],
    ['same bytes, different normalization', 'caf\u00e9', 'cafe\u0301', false],
  ])('%s', (_name, a, b, expected) => {
    expect(safeEqual(a, b)).toBe(expected)
    expect(safeEqual(b, a)).toBe(expected)
  })
})
