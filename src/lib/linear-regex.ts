import { RE2JS } from 're2js'

/**
 * Regular expressions matched in time linear in the text: RE2's automata (the `re2js` port, decision 057)
 * never backtrack, so no pattern makes a match take exponential time. Patterns are written in JavaScript's
 * syntax: one must compile as a JavaScript RegExp with its flags, and is then translated to RE2's spelling
 * (`\u` escapes, `\cX`); what RE2 cannot match in linear time (backreferences, lookahead, lookbehind) is
 * refused here, with a message naming it. A match costs at most about `programSize` × the text's length steps.
 */

/** Why a pattern was refused: `syntax` when it is not a valid JavaScript regular expression. */
export class RegexRefused extends Error {
  constructor(
    readonly kind: 'syntax' | 'unsupported',
    message: string,
  ) {
    super(message)
  }
}

/** The flags a linear pattern may carry: i, m, s and u (RE2 reads code points either way); g and y are the caller's. */
const knownFlags = /^[gimsuy]*$/

/**
 * Compiles `source` (JavaScript syntax) with `flags` into RE2.
 * @throws RegexRefused `syntax` when JavaScript does not compile it, `unsupported` when RE2 cannot run it.
 */
export function compileLinear(source: string, flags = ''): RE2JS {
  if (!knownFlags.test(flags)) throw new RegexRefused('syntax', `unsupported flags ${flags}`)
  try {
    new RegExp(source, flags)
  } catch (err) {
    throw new RegexRefused('syntax', (err as Error).message)
  }
  let re2Flags = 0
  if (flags.includes('i')) re2Flags |= RE2JS.CASE_INSENSITIVE
  if (flags.includes('m')) re2Flags |= RE2JS.MULTILINE
  if (flags.includes('s')) re2Flags |= RE2JS.DOTALL
  // The translation reads an escape it does not know as the bare letter, so `\k<name>` must be caught first.
  if (/(?:^|[^\\])(?:\\\\)*\\k</.test(source)) throw new RegexRefused('unsupported', unsupportedReason('`\\k'))
  try {
    return RE2JS.compile(RE2JS.translateRegExp(joinSurrogateEscapes(source)), re2Flags)
  } catch (err) {
    throw new RegexRefused('unsupported', unsupportedReason((err as Error).message))
  }
}

const cache = new Map<string, RE2JS>()
const cacheSize = 500

/** compileLinear, remembered for the last few hundred patterns (field patterns and flow steps repeat). */
export function compileLinearCached(source: string, flags = ''): RE2JS {
  const key = `${flags}/${source}`
  let re = cache.get(key)
  if (re === undefined) {
    re = compileLinear(source, flags)
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
    cache.set(key, re)
  }
  return re
}

/** RE2's refusal, said in terms of the JavaScript feature the pattern used. */
function unsupportedReason(message: string): string {
  if (/`\\[1-9k]/.test(message))
    return 'backreferences (\\1, \\k<name>) are not supported: patterns run on a linear-time engine (RE2)'
  if (/`\(\?[=!]|`\(\?<[=!]/.test(message))
    return 'lookahead or lookbehind ((?=, (?!, (?<=, (?<!) is not supported: patterns run on a linear-time engine (RE2)'
  if (/invalid repeat count|invalid nested repetition/.test(message))
    return 'pattern is too large: a repetition may count to at most 1000, nested repetitions multiplied'
  return `not supported by the linear-time engine (RE2): ${message.replace(/^error parsing regexp: /, '')}`
}

/** `\uD83D\uDE00` (a surrogate pair as two escapes, one code point in JavaScript's `u` mode) as `\u{1F600}`. */
function joinSurrogateEscapes(source: string): string {
  return source.replace(
    /\\\\|\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})/g,
    (all, high?: string, low?: string) =>
      high === undefined || low === undefined
        ? all
        : `\\u{${(((Number.parseInt(high, 16) - 0xd800) << 10) + Number.parseInt(low, 16) - 0xdc00 + 0x10000).toString(16)}}`,
  )
}
