import { compileLinear, compileLinearCached, RegexRefused } from '../../../lib/linear-regex.js'

/**
 * `validationRules.pattern`: a regular expression source (JavaScript syntax, `u` flag, not anchored
 * implicitly), matched by RE2 in time linear in the value (lib/linear-regex.ts, decision 057), so `(a+)+$`
 * or `.*.*.*x` cannot stall the process. What RE2 cannot do is refused when the field is defined:
 * backreferences and lookarounds. A pattern's program is at most `states` instructions and a value at most
 * `inputChars` characters (longer ones are refused without matching), so a match is at most 2,000,000 steps.
 */
export const patternLimits = { sourceChars: 200, inputChars: 2000, states: 1000 } as const

/** A problem with a pattern source, or null when it is accepted. */
export function checkPattern(source: string): string | null {
  if (source.length > patternLimits.sourceChars) return `pattern is longer than ${patternLimits.sourceChars} characters`
  try {
    const size = compileLinear(source, 'u').programSize()
    if (size > patternLimits.states)
      return `pattern is too large once its repetitions are expanded (over ${patternLimits.states} states)`
    return null
  } catch (err) {
    if (!(err instanceof RegexRefused)) throw err
    return err.kind === 'syntax' ? 'pattern is not a valid regular expression' : `pattern: ${err.message}`
  }
}

/** Whether `value` matches the (checked) pattern, in linear time; the caller bounds the value to `inputChars`. */
export function matchesPattern(source: string, value: string): boolean {
  return compileLinearCached(source, 'u').test(value)
}
