import { describe, expect, it } from 'vitest'
import { checkPattern, matchesPattern, patternLimits } from './safe-pattern.js'

const accepted = [
  '^[A-Z]{3}$',
  '^\\d{5}(-\\d{4})?$',
  '^[a-z]+@[a-z]+\\.[a-z]+$',
  '^(?:foo|bar)+$',
  '^[A-Z][a-z]+( [A-Z][a-z]+)*$',
  '^\\p{L}+$',
  '(?<year>\\d{4})-(?<month>\\d{2})',
  '(a+)+$',
  '.*.*.*x',
  'a{500}',
]

const refused: [string, RegExp][] = [
  ['(a)\\1', /backreferences/],
  ['(?<n>a)\\k<n>', /backreferences/],
  ['^(?=.*\\d).{8,}$', /lookahead or lookbehind/],
  ['(?!x)y', /lookahead or lookbehind/],
  ['(?<=a)b', /lookahead or lookbehind/],
  ['(?<!a)b', /lookahead or lookbehind/],
  ['(a{100}){100}', /too large/],
  ['[', /not a valid regular expression/],
  ['a{', /not a valid regular expression/],
  ['\\-', /not a valid regular expression/],
  ['x'.repeat(patternLimits.sourceChars + 1), /longer than 200/],
]

describe('checkPattern', () => {
  it.each(accepted)('accepts %s', (source) => {
    expect(checkPattern(source)).toBeNull()
  })

  it.each(refused)('refuses %s', (source, problem) => {
    expect(checkPattern(source)).toMatch(problem)
  })
})

// RE2 must agree with the native engine wherever both can run (the syntax is translated from JavaScript's).
const agreement: [string, string[]][] = [
  ['^[A-Z]{3}$', ['ABC', 'AB', 'ABCD', 'abc', '']],
  ['[0-9]', ['a1b', 'abc', '']],
  ['^\\d{5}(-\\d{4})?$', ['12345', '12345-6789', '12345-67', '1234']],
  ['^(?:foo|bar)+$', ['foobar', 'foofoo', 'fooba', '']],
  ['^a*$', ['', 'aaa', 'ab']],
  ['^(a?)*$', ['', 'aaa', 'b']],
  ['^()*x$', ['x', 'xx']],
  ['^a{2,3}$', ['a', 'aa', 'aaa', 'aaaa']],
  ['^a{2,}$', ['a', 'aa', 'aaaaa']],
  ['^a{0}b$', ['b', 'ab']],
  ['^a+?b$', ['aab', 'b']],
  ['\\bcat\\b', ['a cat sat', 'concat', 'cat']],
  ['\\Bcat', ['concat', 'cat']],
  ['^.$', ['x', '\n', '😀', '']],
  ['^😀{2}$', ['😀😀', '😀']],
  ['^\\u{1F600}$', ['😀', 'x']],
  ['^\\uD83D\\uDE00$', ['😀', 'x']],
  ['^\\p{Lu}\\p{Ll}+$', ['Élan', 'élan', 'E']],
  ['^[^\\]]+$', ['abc', 'a]c']],
  ['^[\\w.-]+@[\\w-]+(\\.[\\w-]+)+$', ['a.b@c.de', 'a@b', 'a b@c.de']],
  ['^\\x41\\t\\cJ$', ['A\t\n', 'A\t']],
  ['colou?r', ['color', 'colour', 'colr']],
  ['^(?<y>\\d{4})-(?:0[1-9]|1[0-2])$', ['2024-01', '2024-13']],
  ['a|b|^c$', ['xb', 'c', 'xc']],
  ['$^', ['', 'x']],
]

describe('matchesPattern', () => {
  for (const [source, values] of agreement) {
    it.each(values)(`${source} on %j agrees with the native engine`, (value) => {
      expect(checkPattern(source)).toBeNull()
      expect(matchesPattern(source, value)).toBe(new RegExp(source, 'u').test(value))
    })
  }

  // Each of these takes the native engine minutes or more on these values; the test timeout would catch a regression.
  const hostile: [string, string, boolean][] = [
    ['(a+)+$', `${'a'.repeat(patternLimits.inputChars - 1)}!`, false],
    ['(a+)+$', `!${'a'.repeat(patternLimits.inputChars - 1)}`, true],
    ['^(a+)+$', `${'a'.repeat(patternLimits.inputChars - 1)}!`, false],
    ['^(a|aa)*$', `${'a'.repeat(patternLimits.inputChars - 1)}!`, false],
    ['.*.*.*x', 'a'.repeat(patternLimits.inputChars), false],
    ['\\s*\\s*\\s*$', `${' '.repeat(patternLimits.inputChars - 1)}a`, true],
    ['^(\\w+\\s?)*$', `${'word '.repeat(patternLimits.inputChars / 5 - 1)}!!!!`, false],
    ['a{0,16}a{0,16}a{0,16}a{0,16}a{0,16}a{0,16}b', 'a'.repeat(patternLimits.inputChars), false],
  ]
  it.each(hostile)('%s stays linear', (source, value, expected) => {
    expect(checkPattern(source)).toBeNull()
    expect(matchesPattern(source, value)).toBe(expected)
  })
})
