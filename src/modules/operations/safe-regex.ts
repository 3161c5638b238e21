import type { RE2JS } from 're2js'
import { compileLinear, compileLinearCached, RegexRefused } from '../../lib/linear-regex.js'

/** The longest pattern a `matches` rule may hold. */
export const maxPatternLength = 500
/** The longest text a `matches` rule tests; a longer one fails the rule with an error, never a silent false. */
export const maxSubjectLength = 100_000
/**
 * The most work one test or replace may take: the pattern's RE2 program size × the text's length. RE2 takes
 * time linear in each (decision 057), so this bounds a match's time where a backtracking engine needed a
 * timeout. A global replace also pays per match: 100,000 one-character matches take about 60 ms, 160 ms
 * when the replacement reads a group (measured on the two-core test machine).
 */
export const maxWork = 10_000_000

const allowedFlags = /^[imsu]*$/

/**
 * Why a pattern is refused, or null. Refused: over 500 characters, flags other than i m s u, what does not
 * compile as a JavaScript regular expression, and what the linear-time engine (RE2) cannot run:
 * back-references, lookahead and lookbehind.
 */
export function checkPattern(pattern: string, flags = ''): string | null {
  if (pattern.length > maxPatternLength) return `the pattern is longer than ${maxPatternLength} characters`
  if (!allowedFlags.test(flags) || new Set(flags).size !== flags.length)
    return 'flags may only be i, m, s and u, each once'
  try {
    compileLinear(pattern, flags)
    return null
  } catch (err) {
    if (!(err instanceof RegexRefused)) throw err
    return err.kind === 'syntax' ? `the pattern does not compile: ${err.message}` : `the pattern: ${err.message}`
  }
}

/**
 * A RegExp-shaped object over RE2 for JSONata's `RegexEngine` (`$match`, `$replace`, `/…/`): JSONata only
 * sets `lastIndex` and calls `exec`. Throws an Error (`Regular expression refused: …`) for what RE2 cannot run.
 */
export function linearRegExp(pattern: string | RegExp, flags?: string): RegExp {
  const source = pattern instanceof RegExp ? pattern.source : pattern
  const allFlags = flags ?? (pattern instanceof RegExp ? pattern.flags : '')
  if (source.length > maxPatternLength)
    throw new Error(`Regular expression refused: the pattern is longer than ${maxPatternLength} characters`)
  let re: RE2JS
  try {
    re = compileLinearCached(source, allFlags.replace(/[gy]/g, ''))
  } catch (err) {
    throw new Error(`Regular expression refused: ${(err as Error).message}`, { cause: err })
  }
  const global = allFlags.includes('g') || allFlags.includes('y')
  const engine = {
    lastIndex: 0,
    source,
    flags: allFlags,
    global,
    // No length or work bound here: a JSONata evaluation runs in its own process under a deadline.
    exec(subject: string): RegExpExecArray | null {
      const matcher = re.matcher(subject)
      if (!matcher.find(global ? engine.lastIndex : 0)) {
        engine.lastIndex = 0
        return null
      }
      const groups = Array.from({ length: re.groupCount() + 1 }, (_, i) => matcher.group(i) ?? undefined)
      const result = Object.assign(groups, { index: matcher.start(), input: subject, groups: namedOf(re, matcher) })
      if (global) engine.lastIndex = matcher.end()
      return result as unknown as RegExpExecArray
    },
    test(subject: string): boolean {
      return engine.exec(subject) !== null
    },
  }
  return engine as unknown as RegExp
}

/** linearRegExp as Ajv's `code.regExp`, so a JSON Schema's `pattern` runs on RE2 too (`code` names it in generated code). */
export const ajvRegExp = Object.assign((pattern: string, flags: string) => linearRegExp(pattern, flags), {
  code: 'linearRegExp',
})

/**
 * Tests `subject` against an already checked pattern, in time linear in the text (RE2). Throws an Error
 * naming the limit it hit: the text's length, or the work bound.
 */
export function boundedTest(pattern: RegExp, subject: string): boolean {
  const re = linearOf(pattern)
  checkBounds(re, subject)
  return re.test(subject)
}

/** The longest text boundedReplace gives by default. */
export const maxReplacedLength = 1_000_000

/**
 * `subject.replace(pattern, replacement)` for an already checked pattern (text_format's regex_replace),
 * matched by RE2 under the same bounds as boundedTest and giving at most `maxLength` characters. The
 * replacement's `$…` patterns are expanded here as JavaScript does, each piece counted as it is taken (a
 * slice of the subject, not a copy) and the result never joined past the bound: `$'` repeated in the
 * replacement would otherwise build more than any bound allows. Throws an Error naming the limit it hit.
 */
export function boundedReplace(
  pattern: RegExp,
  subject: string,
  replacement: string,
  maxLength = maxReplacedLength,
): string {
  const re = linearOf(pattern)
  checkBounds(re, subject)
  const parts = parseReplacement(replacement, re.groupCount())
  const names = new Set(Object.keys(re.namedGroups()))
  const matcher = re.matcher(subject)
  let length = subject.length
  const view: MatchView = {
    match: '',
    position: 0,
    subject,
    group: (index) => matcher.group(index) ?? '',
    named: names.size > 0 ? (name) => (names.has(name) ? (matcher.group(name) ?? '') : '') : undefined,
  }
  // Pieces are collected and joined once: a global replace may make a hundred thousand matches.
  const out: string[] = []
  let last = 0
  let from = 0
  while (from <= subject.length && matcher.find(from)) {
    const position = matcher.start()
    const match = subject.slice(position, matcher.end())
    // Groups are read only when the replacement names them (each read costs RE2 a capture pass).
    view.match = match
    view.position = position
    length -= match.length
    out.push(subject.slice(last, position))
    // Counted as it is built, and given up at the first piece past the bound: a piece is at most the subject.
    for (const part of parts) {
      const piece = pieceOf(part, view)
      length += piece.length
      if (length > maxLength) throw new Error(`the result would be longer than ${maxLength} characters`)
      out.push(piece)
    }
    last = position + match.length
    if (!pattern.global) break
    // After an empty match the next search starts one character on, as String.prototype.replace does.
    from = match === '' ? last + stepAt(subject, last, pattern.unicode) : last
  }
  out.push(subject.slice(last))
  return out.join('')
}

/** How many code units the character at `at` takes: a surrogate pair is one step in `u` mode. */
function stepAt(subject: string, at: number, unicode: boolean): number {
  const code = subject.codePointAt(at)
  return unicode && code !== undefined && code > 0xffff ? 2 : 1
}

/** The RE2 program of an already checked RegExp (its flags but g and y). */
function linearOf(pattern: RegExp): RE2JS {
  return compileLinearCached(pattern.source, pattern.flags.replace(/[gy]/g, ''))
}

function checkBounds(re: RE2JS, subject: string): void {
  if (subject.length > maxSubjectLength) throw new Error(`the text is longer than ${maxSubjectLength} characters`)
  if (re.programSize() * subject.length > maxWork)
    throw new Error(
      `the pattern is too large for a text of ${subject.length} characters (${re.programSize()} instructions × characters over ${maxWork})`,
    )
}

/** The named groups of the current match, or undefined when the pattern has none (then `$<` is literal). */
function namedOf(re: RE2JS, matcher: ReturnType<RE2JS['matcher']>): Record<string, string | undefined> | undefined {
  const names = Object.keys(re.namedGroups())
  if (names.length === 0) return undefined
  return Object.fromEntries(names.map((name) => [name, matcher.group(name) ?? undefined]))
}

type Part =
  | string
  | { readonly kind: 'match' | 'before' | 'after' }
  | { readonly kind: 'group'; readonly index: number }
  | { readonly kind: 'named'; readonly name: string }

/** The replacement's text and `$` patterns, as String.prototype.replace reads them (GetSubstitution). */
function parseReplacement(replacement: string, groups: number): Part[] {
  const parts: Part[] = []
  let text = ''
  const flush = () => {
    if (text !== '') parts.push(text)
    text = ''
  }
  for (let i = 0; i < replacement.length; i++) {
    const ch = replacement[i]!
    const next = replacement[i + 1]
    if (ch !== '$' || next === undefined) {
      text += ch
      continue
    }
    if (next === '$') {
      text += '$'
      i += 1
    } else if (next === '&' || next === '`' || next === "'") {
      flush()
      parts.push({ kind: next === '&' ? 'match' : next === '`' ? 'before' : 'after' })
      i += 1
    } else if (/[0-9]/.test(next)) {
      const two = /[0-9]/.test(replacement[i + 2] ?? '') ? Number(replacement.slice(i + 1, i + 3)) : NaN
      const one = Number(next)
      if (two >= 1 && two <= groups) {
        flush()
        parts.push({ kind: 'group', index: two })
        i += 2
      } else if (one >= 1 && one <= groups) {
        flush()
        parts.push({ kind: 'group', index: one })
        i += 1
      } else {
        text += '$'
      }
    } else if (next === '<') {
      const close = replacement.indexOf('>', i + 2)
      if (close === -1) {
        text += '$'
      } else {
        flush()
        parts.push({ kind: 'named', name: replacement.slice(i + 2, close) })
        i = close
      }
    } else {
      text += '$'
    }
  }
  flush()
  return parts
}

/** The current match as the replacement's pieces read it (one object, moved on per match); groups on demand. */
interface MatchView {
  match: string
  position: number
  readonly subject: string
  group(index: number): string
  /** Undefined when the pattern has no named groups (then `$<` is literal). */
  readonly named: ((name: string) => string) | undefined
}

function pieceOf(part: Part, view: MatchView): string {
  if (typeof part === 'string') return part
  switch (part.kind) {
    case 'match':
      return view.match
    case 'before':
      return view.subject.slice(0, view.position)
    case 'after':
      return view.subject.slice(view.position + view.match.length)
    case 'group':
      return view.group(part.index)
    case 'named':
      // Without named groups, `$<` is literal text.
      return view.named === undefined ? `$<${part.name}>` : view.named(part.name)
  }
}
