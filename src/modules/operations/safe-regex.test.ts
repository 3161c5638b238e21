import { describe, expect, it } from 'vitest'
import { boundedReplace, boundedTest, checkPattern, linearRegExp, maxWork } from './safe-regex.js'

describe('checkPattern', () => {
  const accepted = [
    '^abc$',
    '\\d+',
    '^[a-z]+@[a-z]+\\.[a-z]{2,}$',
    '(?:ab)+',
    '(a+)?',
    '(abc)*',
    '[(+*]+',
    'a{2,5}',
    '(\\d{3})-(\\d{4})',
    '^(http|https)://',
    '\\(a+\\)+',
  ]
  it.each(accepted)('accepts %j', (pattern) => {
    expect(checkPattern(pattern)).toBeNull()
  })

  const refused: [string, string, RegExp][] = [
    ['(a)\\1', '', /backreferences/],
    ['(?<n>a)\\k<n>', '', /backreferences/],
    ['^(?=.*\\d).{8,}$', '', /lookahead or lookbehind/],
    ['(?<!a)b', '', /lookahead or lookbehind/],
    ['(a{100}){100}', '', /too large/],
    ['[', '', /does not compile/],
    ['a', 'g', /flags/],
    ['a', 'ii', /flags/],
    ['a'.repeat(501), '', /longer than 500/],
  ]
  it.each(refused)('refuses %j (flags %j)', (pattern, flags, message) => {
    expect(checkPattern(pattern, flags)).toMatch(message)
  })
})

// The shapes whose backtracking grows exponentially with the text, once refused when saved: RE2 runs them in
// linear time, so they are accepted and finish at once on the texts that made a backtracking engine hang.
const hostile: [RegExp, string, boolean][] = [
  [/(a+)+$/, `${'a'.repeat(40)}!`, false],
  [/(a*)*b/, 'a'.repeat(100_000), false],
  [/(a|aa)+$/, `${'a'.repeat(99_999)}!`, false],
  [/(\w+\s?)*$/, `${'word '.repeat(19_999)}!!!!`, true],
  [/((ab)*c)+/, 'ab'.repeat(50_000), false],
  [/(?:a+){2,}/, 'a'.repeat(100_000), true],
  [/(x+x+)+y/, 'x'.repeat(100_000), false],
  [/(a+)+b/, `${'a'.repeat(40)}c`, false],
]

describe('boundedTest', () => {
  it('tests a pattern', () => {
    expect(boundedTest(/^ab+c$/i, 'ABBC')).toBe(true)
    expect(boundedTest(/^ab+c$/, 'abd')).toBe(false)
  })
  it.each(hostile)('runs %s in linear time', (pattern, subject, expected) => {
    expect(checkPattern(pattern.source, pattern.flags)).toBeNull()
    const started = Date.now()
    expect(boundedTest(pattern, subject)).toBe(expected)
    expect(Date.now() - started).toBeLessThan(2000)
  })
  it('refuses a pattern too large for its text (program size × length over the work bound)', () => {
    expect(() => boundedTest(/\p{L}{990}x/u, 'é'.repeat(maxWork / 990 + 1))).toThrow(/too large for a text/)
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
  it.each(hostile)('replaces with %s in linear time', (pattern, subject) => {
    const started = Date.now()
    expect(boundedReplace(new RegExp(pattern.source, 'g'), subject, '')).toBeTypeOf('string')
    expect(Date.now() - started).toBeLessThan(2000)
  })
  it('refuses a text over its length bound', () => {
    expect(() => boundedReplace(/a/g, 'a'.repeat(100_001), 'b')).toThrow(/longer than 100000 characters/)
  })
  // The replacement's $ patterns are expanded by boundedReplace itself: exactly as the engine would.
  const patterns: [RegExp, string][] = [
    [/(\d+)-(\d+)/g, '1-2 and 3-4 and 56-78'],
    [/(?<y>\d{4})-(?<m>\d\d)/g, 'on 2024-05 and 1999-12'],
    [/x/g, 'axbxc'],
    [/(a)(b)?/g, 'ab a'],
    [/(?:)/g, 'abc'],
    [/a*/g, 'baaac'],
    [/x*/gu, 'a😀b'],
    [/B/gi, 'abAb'],
  ]
  const replacements = [
    '[$&]',
    '$`|',
    "|$'",
    '$1',
    '$2$1',
    '$01',
    '$10',
    '$3',
    '$0',
    '$$',
    '$',
    'a$',
    '$<y>/$<m>',
    '$<nope>',
    '$<y',
    '$x',
    '$$1',
    '$11',
    '',
  ]
  it.each(
    patterns.flatMap(([pattern, subject]) =>
      replacements.map((replacement) => [String(pattern), replacement, pattern, subject] as const),
    ),
  )('%s with %j as the engine does', (_name, replacement, pattern, subject) => {
    expect(boundedReplace(pattern, subject, replacement)).toBe(subject.replace(pattern, replacement))
  })
  it("refuses a replacement that would grow past maxLength, before the engine builds it (`$'` repeated froze or ended the process)", () => {
    expect(() => boundedReplace(/a/g, 'a'.repeat(2000), "$'".repeat(50_000))).toThrow(
      /result would be longer than 1000000 characters/,
    )
    expect(() => boundedReplace(/a/g, 'a'.repeat(2000), 'b'.repeat(50_000))).toThrow(
      /result would be longer than 1000000 characters/,
    )
    expect(boundedReplace(/a/g, 'a'.repeat(1000), 'b'.repeat(100))).toHaveLength(100_000)
  })
})

describe("linearRegExp (JSONata's regex engine)", () => {
  it('finds matches from lastIndex, as JSONata walks them', () => {
    const re = linearRegExp(/(\d+)(?<unit>px)?/g)
    re.lastIndex = 0
    const first = re.exec('a 12px b 3')!
    expect([first[0], first[1], first[2], first.index, first.groups?.unit]).toEqual(['12px', '12', 'px', 2, 'px'])
    expect(re.lastIndex).toBe(6)
    const second = re.exec('a 12px b 3')!
    expect([second[0], second[2], second.index]).toEqual(['3', undefined, 9])
    expect(re.exec('a 12px b 3')).toBeNull()
    expect(re.lastIndex).toBe(0)
  })
  it('refuses what RE2 cannot run, and runs the hostile shapes at once', () => {
    expect(() => linearRegExp('(a)\\1', 'g')).toThrow(/Regular expression refused: backreferences/)
    const re = linearRegExp(/(a+)+b/g)
    expect(re.exec(`${'a'.repeat(100_000)}c`)).toBeNull()
  })
})
