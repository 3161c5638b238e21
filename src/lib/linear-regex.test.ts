import { describe, expect, it } from 'vitest'
import { compileLinear, RegexRefused } from './linear-regex.js'

const refusal = (source: string, flags = ''): RegexRefused | null => {
  try {
    compileLinear(source, flags)
    return null
  } catch (err) {
    return err as RegexRefused
  }
}

describe('compileLinear', () => {
  it.each([
    ['(a)\\1', 'unsupported', /backreferences/],
    ['(?<n>a)\\k<n>', 'unsupported', /backreferences/],
    ['(?=a)', 'unsupported', /lookahead or lookbehind/],
    ['(?!a)', 'unsupported', /lookahead or lookbehind/],
    ['(?<=a)b', 'unsupported', /lookahead or lookbehind/],
    ['(?<!a)b', 'unsupported', /lookahead or lookbehind/],
    ['a{1001}', 'unsupported', /too large/],
    ['(a{100}){100}', 'unsupported', /too large/],
    ['(', 'syntax', /Invalid regular expression/],
  ] as const)('refuses %s (%s)', (source, kind, message) => {
    const err = refusal(source, 'u')
    expect(err).toBeInstanceOf(RegexRefused)
    expect(err?.kind).toBe(kind)
    expect(err?.message).toMatch(message)
  })

  it('reads JavaScript spellings: \\u escapes, surrogate pairs, \\cX, named groups, flags', () => {
    expect(compileLinear('^\\u{1F600}\\uD83D\\uDE00\\u0041$', 'u').test('😀😀A')).toBe(true)
    expect(compileLinear('^\\cJ$', 'u').test('\n')).toBe(true)
    expect(compileLinear('(?<y>\\d{4})', 'u').namedGroups()).toEqual({ y: 1 })
    expect(compileLinear('^abc$', 'i').test('ABC')).toBe(true)
    expect(compileLinear('^b$', 'm').test('a\nb')).toBe(true)
    expect(compileLinear('^a.b$', 's').test('a\nb')).toBe(true)
    expect(compileLinear('\\\\k<n>', 'u').test('\\k<n>')).toBe(true)
  })

  it('matches what took a backtracking engine exponential time at once', () => {
    const started = Date.now()
    expect(compileLinear('^(a+)+$').test(`${'a'.repeat(100_000)}!`)).toBe(false)
    expect(compileLinear('^(a|aa)*$').test(`${'a'.repeat(100_000)}!`)).toBe(false)
    expect(Date.now() - started).toBeLessThan(2000)
  })
})
