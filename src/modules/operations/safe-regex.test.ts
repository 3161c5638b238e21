import { describe, expect, it } from 'vitest'
import { boundedReplace, boundedTest, checkPattern, checkPatternShape } from './safe-regex.js'

describe('checkPattern', () => {
  const accepted = ['^abc$', '\\d+', '^[a-z]+@[a-z]+\\.[a-z]{2,}$', '(?:ab)+', '(a+)?', '(abc)*', '[(+*]+', 'a{2,5}', '(\\d{3})-(\\d{4})', '^(http|https)://', '\\(a+\\)+']
  it.each(accepted)('accepts %j', (pattern) => {
    expect(checkPattern(pattern)).toBeNull()
  })

  const refused: [string, string, RegExp][] = [
    ['(a+)+$', '', /nested quantifiers/],
    ['(a*)*b', '', /nested quantifiers/],
    ['(a|aa)+$', '', /nested quantifiers/],
    ['(\\w+\\s?)*$', '', /nested quantifiers/],
    ['((ab)*c)+', '', /nested quantifiers/],
    ['(?:a+){2,}', '', /nested quantifiers/],
    ['(x+x+)+y', '', /nested quantifiers/],
    ['(a)\\1', '', /back-references/],
    ['(?<n>a)\\k<n>', '', /back-references/],
    ['[', '', /does not compile/],
    ['a', 'g', /flags/],
    ['a', 'ii', /flags/],
    ['a'.repeat(501), '', /longer than 500/],
  ]
  it.each(refused)('refuses %j (flags %j)', (pattern, flags, message) => {
    expect(checkPattern(pattern, flags)).toMatch(message)
  })

  it('checks the shape alone for another engine', () => {
    expect(checkPatternShape('(a+)+')).toMatch(/nested/)
    expect(checkPatternShape('a+')).toBeNull()
  })
})

describe('boundedTest', () => {
  it('tests a pattern', () => {
    expect(boundedTest(/^ab+c$/i, 'ABBC')).toBe(true)
    expect(boundedTest(/^ab+c$/, 'abd')).toBe(false)
  })
  it('stops a catastrophic pattern after its time bound instead of hanging', () => {
    const started = Date.now()
    expect(() => boundedTest(/(a+)+b/, `${'a'.repeat(40)}c`)).toThrow(/ran longer than 50 ms/)
    expect(Date.now() - started).toBeLessThan(5000)
  })
  it('refuses a text over its length bound', () => {
    expect(() => boundedTest(/a/, 'a'.repeat(100_001))).toThrow(/longer than 100000 characters/)
  })
})

describe('boundedReplace', () => {
  it('replaces, with group references in the replacement', () => {
    expect(boundedReplace(/(\d+)-(\d+)/g, '1-2 and 3-4', '$2:$1')).toBe('2:1 and 4:3')
    expect(boundedReplace(/a/, 'aaa', 'b')).toBe('baa')
  })
  it('stops a catastrophic pattern after its time bound', () => {
    expect(() => boundedReplace(/(a+)+b/g, `${'a'.repeat(40)}c`, '')).toThrow(/ran longer than 50 ms/)
  })
  it('refuses a text over its length bound', () => {
    expect(() => boundedReplace(/a/g, 'a'.repeat(100_001), 'b')).toThrow(/longer than 100000 characters/)
  })
  // The replacement's $ patterns are expanded by boundedReplace itself: exactly as the engine would.
  const patterns: [RegExp, string][] = [[/(\d+)-(\d+)/g, '1-2 and 3-4 and 56-78'], [/(?<y>\d{4})-(?<m>\d\d)/g, 'on 2024-05 and 1999-12'], [/x/g, 'axbxc'], [/(a)(b)?/g, 'ab a'], [/(?:)/g, 'abc']]
  const replacements = ['[$&]', '$`|', "|$'", '$1', '$2$1', '$01', '$10', '$3', '$0', '$$', '$', 'a$', '$<y>/$<m>', '$<nope>', '$<y', '$x', '$$1', '$11', '']
  it.each(patterns.flatMap(([pattern, subject]) => replacements.map((replacement) => [String(pattern), replacement, pattern, subject] as const)))('%s with %j as the engine does', (_name, replacement, pattern, subject) => {
    expect(boundedReplace(pattern, subject, replacement)).toBe(subject.replace(pattern, replacement))
  })
  it("refuses a replacement that would grow past maxLength, before the engine builds it (`$'` repeated froze or ended the process)", () => {
    expect(() => boundedReplace(/a/g, 'a'.repeat(2000), "$'".repeat(50_000))).toThrow(/result would be longer than 1000000 characters/)
    expect(() => boundedReplace(/a/g, 'a'.repeat(2000), 'b'.repeat(50_000))).toThrow(/result would be longer than 1000000 characters/)
    expect(boundedReplace(/a/g, 'a'.repeat(1000), 'b'.repeat(100))).toHaveLength(100_000)
  })
})
