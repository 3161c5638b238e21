import { createContext, Script } from 'node:vm'

/** The longest pattern a `matches` rule may hold. */
export const maxPatternLength = 500
/** The longest text a `matches` rule tests; a longer one fails the rule with an error, never a silent false. */
export const maxSubjectLength = 100_000
/** How long one test may run before it is stopped (a backstop: the save-time check refuses the known blow-ups). */
export const matchTimeoutMs = 50

const allowedFlags = /^[imsu]*$/

/**
 * Why a pattern is refused, or null. Refused: over 500 characters, flags other than i m s u, what does not
 * compile, back-references, and a repeated group holding a repetition or an alternation (`(a+)+`,
 * `(a|ab)*`, `(\w+\s?)*`): the shapes whose backtracking grows exponentially with the text.
 */
export function checkPattern(pattern: string, flags = ''): string | null {
  if (pattern.length > maxPatternLength) return `the pattern is longer than ${maxPatternLength} characters`
  if (!allowedFlags.test(flags) || new Set(flags).size !== flags.length) return 'flags may only be i, m, s and u, each once'
  try {
    new RegExp(pattern, flags)
  } catch (err) {
    return `the pattern does not compile: ${(err as Error).message}`
  }
  return nestedRepetition(pattern)
}

/** The shape check alone (length, back-references, nested repetition), for patterns another engine compiles (JSONata's). */
export function checkPatternShape(pattern: string): string | null {
  if (pattern.length > maxPatternLength) return `the pattern is longer than ${maxPatternLength} characters`
  return nestedRepetition(pattern)
}

interface Group {
  repeats: boolean
  alternates: boolean
}

/** Scans the pattern's structure: groups, what they hold, and what repeats them. */
function nestedRepetition(pattern: string): string | null {
  const stack: Group[] = [{ repeats: false, alternates: false }]
  let i = 0
  // The group that just closed, while we look at what follows it.
  let closed: Group | null = null
  while (i < pattern.length) {
    const ch = pattern[i]!
    const quantifier = quantifierAt(pattern, i)
    if (quantifier) {
      if (closed && quantifier.repeats && (closed.repeats || closed.alternates)) {
        return 'a repeated group holds a repetition or an alternation (nested quantifiers can take exponential time)'
      }
      if (quantifier.repeats) stack[stack.length - 1]!.repeats = true
      closed = null
      i += quantifier.length
      continue
    }
    closed = null
    if (ch === '\\') {
      const next = pattern[i + 1] ?? ''
      if (/[1-9]/.test(next) || next === 'k') return 'back-references are not allowed'
      i += 2
    } else if (ch === '[') {
      i = classEnd(pattern, i)
    } else if (ch === '(') {
      stack.push({ repeats: false, alternates: false })
      i += 1
    } else if (ch === ')') {
      const group = stack.length > 1 ? stack.pop()! : { repeats: false, alternates: false }
      const outer = stack[stack.length - 1]!
      outer.repeats ||= group.repeats
      outer.alternates ||= group.alternates
      closed = group
      i += 1
    } else {
      if (ch === '|') stack[stack.length - 1]!.alternates = true
      i += 1
    }
  }
  return null
}

/** A quantifier at `i` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, with an optional lazy `?`), and whether it repeats (more than once). */
function quantifierAt(pattern: string, i: number): { length: number; repeats: boolean } | null {
  const ch = pattern[i]
  const lazy = (at: number) => (pattern[at] === '?' ? 1 : 0)
  if (ch === '*' || ch === '+') return { length: 1 + lazy(i + 1), repeats: true }
  if (ch === '?') return { length: 1 + lazy(i + 1), repeats: false }
  if (ch === '{') {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
    if (!match) return null
    const max = match[2] === undefined ? Number(match[1]) : match[3] === '' ? Infinity : Number(match[3])
    return { length: match[0].length + lazy(i + match[0].length), repeats: max > 1 }
  }
  return null
}

function classEnd(pattern: string, open: number): number {
  let i = open + 1
  if (pattern[i] === '^') i += 1
  if (pattern[i] === ']') i += 1
  while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1
  return i + 1
}

// One context for every bounded test: creating one costs far more than a test.
const sandbox = createContext(Object.create(null) as object)
const testScript = new Script('pattern.test(subject)')

/**
 * Tests `subject` against an already checked pattern, stopped after 50 ms (node:vm's watchdog interrupts
 * the regular expression engine). Throws an Error naming the limit it hit.
 */
export function boundedTest(pattern: RegExp, subject: string): boolean {
  return bounded(testScript, { pattern, subject }) === true
}

const replaceScript = new Script('subject.replace(pattern, replacement)')

/** The longest text boundedReplace gives by default. */
export const maxReplacedLength = 1_000_000

/**
 * `subject.replace(pattern, replacement)` for an already checked pattern (text_format's regex_replace),
 * under the same bounds as boundedTest (at most 100,000 characters, stopped after 50 ms) and giving at
 * most `maxLength` characters. The replacement's `$…` patterns are expanded here, each match's text
 * counted before it is built: left to the engine, `$'` repeated in the replacement makes it build a list
 * of parts that no time bound interrupts and V8 cannot allocate, which ends the whole process. Throws an
 * Error naming the limit it hit.
 */
export function boundedReplace(pattern: RegExp, subject: string, replacement: string, maxLength = maxReplacedLength): string {
  const parts = parseReplacement(replacement, groupCount(pattern))
  let length = subject.length
  const expand = (...args: unknown[]): string => {
    const named = typeof args[args.length - 1] === 'object' && args[args.length - 1] !== undefined ? (args.pop() as Record<string, string | undefined>) : undefined
    const match = args[0] as string
    const position = args[args.length - 2] as number
    const captures = args.slice(1, -2) as (string | undefined)[]
    length -= match.length
    // Counted before anything is built, and given up at the first part past the bound.
    for (const part of parts) {
      length += typeof part === 'string' ? part.length : part.kind === 'before' ? position : part.kind === 'after' ? subject.length - position - match.length : pieceOf(part, match, position, subject, captures, named).length
      if (length > maxLength) throw new Error(`the result would be longer than ${maxLength} characters`)
    }
    return parts.map((part) => pieceOf(part, match, position, subject, captures, named)).join('')
  }
  return String(bounded(replaceScript, { pattern, subject, replacement: expand }))
}

type Part = string | { readonly kind: 'match' | 'before' | 'after' } | { readonly kind: 'group'; readonly index: number } | { readonly kind: 'named'; readonly name: string }

/** How many capture groups a pattern has (an empty alternative makes it match the empty string). */
function groupCount(pattern: RegExp): number {
  return new RegExp(`${pattern.source}|`, pattern.flags.replace(/[gy]/g, '')).exec('')!.length - 1
}

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

function pieceOf(part: Part, match: string, position: number, subject: string, captures: readonly (string | undefined)[], named: Record<string, string | undefined> | undefined): string {
  if (typeof part === 'string') return part
  switch (part.kind) {
    case 'match':
      return match
    case 'before':
      return subject.slice(0, position)
    case 'after':
      return subject.slice(position + match.length)
    case 'group':
      return captures[part.index - 1] ?? ''
    case 'named':
      // Without named groups, `$<` is literal text.
      return named === undefined ? `$<${part.name}>` : (named[part.name] ?? '')
  }
}

/** Runs `script` in the sandbox with `scope` as its globals, under the length and time bounds; the globals are cleared after. */
function bounded(script: Script, scope: { pattern: RegExp; subject: string; replacement?: (...args: unknown[]) => string }): unknown {
  if (scope.subject.length > maxSubjectLength) throw new Error(`the text is longer than ${maxSubjectLength} characters`)
  const globals = sandbox as Record<string, unknown>
  Object.assign(globals, scope)
  try {
    return script.runInContext(sandbox, { timeout: matchTimeoutMs })
  } catch (err) {
    // The watchdog's error may come from another realm: read its message, not its class.
    const message = String((err as { message?: unknown } | null)?.message ?? err)
    throw new Error(/timed out/.test(message) ? `the pattern ran longer than ${matchTimeoutMs} ms` : message, { cause: err })
  } finally {
    for (const key of Object.keys(scope)) globals[key] = undefined
  }
}
