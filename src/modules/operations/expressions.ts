import jsonata from 'jsonata'
import { parseTemplate } from '../../lib/template/index.js'
import { checkPatternShape } from './safe-regex.js'

/** How long one `{{= }}` expression may run. */
export const expressionTimeoutMs = 1000
/** How deep its evaluation may nest (recursive functions). */
const expressionStack = 200
/** The longest sequence it may build. */
const expressionSequence = 100_000
/** Compiled expressions kept (compiling costs more than most evaluations); the oldest goes first. */
const cacheSize = 500

/** A sync evaluator for lib/template's `evaluate` option. */
export type Evaluate = (code: string, context: unknown) => unknown

/**
 * JSONata's regular expressions (`$match`, `$replace`, `/…/`) go through the same shape check as a rule's
 * `matches`: a pattern with nested repetition is refused, since the expression's timeout cannot stop the
 * regular expression engine mid-match.
 */
export function GuardedRegExp(pattern: string | RegExp, flags?: string): RegExp {
  const source = pattern instanceof RegExp ? pattern.source : pattern
  const refused = checkPatternShape(source)
  if (refused) throw new Error(`Regular expression refused: ${refused}`)
  return new RegExp(pattern, flags)
}

const compiled = new Map<string, jsonata.Expression | Error>()

function compile(code: string): jsonata.Expression {
  let found = compiled.get(code)
  if (found === undefined) {
    try {
      found = jsonata(code, { timeout: expressionTimeoutMs, stack: expressionStack, sequence: expressionSequence, RegexEngine: GuardedRegExp as unknown as RegExpConstructor })
    } catch (err) {
      found = new Error(`Invalid expression: ${messageOf(err)}`)
    }
    if (compiled.size >= cacheSize) compiled.delete(compiled.keys().next().value!)
    compiled.set(code, found)
  }
  if (found instanceof Error) throw found
  return found
}

/** JSONata throws plain objects ({ code, message, position }); this gives their message. */
function messageOf(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) return String((err as { message: unknown }).message)
  return String(err)
}

/**
 * Evaluates one JSONata expression over a template context: its roots (`$trigger`, `$steps`, …) are
 * variables, and the context is also the input (`$`). Bounded by 1 s, a stack of 200 and sequences of
 * 100,000. Resolves to plain data (JSONata's sequences become arrays; functions become undefined).
 * Rejects with an Error carrying JSONata's message.
 */
export async function evaluateExpression(code: string, data: Readonly<Record<string, unknown>>): Promise<unknown> {
  const expression = compile(code)
  const bindings: Record<string, unknown> = {}
  // `$now` stays JSONata's function (`$now()`); the run's timestamp is the template path {{$now}}.
  for (const [name, value] of Object.entries(data)) if (name.startsWith('$') && name !== '$now') bindings[name.slice(1)] = value
  try {
    return plain(await expression.evaluate(data, bindings))
  } catch (err) {
    throw new Error(messageOf(err), { cause: err })
  }
}

/**
 * JSONata's results as plain data: arrays without their sequence flags; functions (JSONata's lambdas are
 * objects holding their environment), regexes and cycles left out.
 */
export function plain(value: unknown, seen: Set<object> = new Set()): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? undefined : value
  if (value instanceof RegExp || seen.has(value) || '_jsonata_lambda' in value || '_jsonata_function' in value) return undefined
  seen.add(value)
  let out: unknown
  if (Array.isArray(value)) {
    out = value.map((item) => plain(item, seen)).filter((item) => item !== undefined)
  } else {
    const copy: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      const copied = plain(item, seen)
      if (copied !== undefined) copy[key] = copied
    }
    out = copy
  }
  seen.delete(value)
  return out
}

/** The code of every `{{= }}` tag in a string (none when it does not parse: the resolver reports that). */
export function expressionCodes(text: string): string[] {
  if (!text.includes('{{')) return []
  const parsed = parseTemplate(text)
  if (!parsed.ok) return []
  return parsed.template.parts.flatMap((part) => (part.kind === 'expression' ? [part.code] : []))
}

/**
 * Evaluates the given expressions now (JSONata is asynchronous) and answers a synchronous evaluator for
 * lib/template that hands back their results: a failed one throws its error there, so the resolver
 * records it as expression_failed.
 */
export async function precomputeExpressions(codes: Iterable<string>, data: Readonly<Record<string, unknown>>): Promise<Evaluate> {
  const results = new Map<string, { ok: true; value: unknown } | { ok: false; error: Error }>()
  for (const code of codes) {
    if (results.has(code)) continue
    try {
      results.set(code, { ok: true, value: await evaluateExpression(code, data) })
    } catch (err) {
      results.set(code, { ok: false, error: err instanceof Error ? err : new Error(String(err)) })
    }
  }
  return (code) => {
    const result = results.get(code)
    if (!result) throw new Error('The expression was not evaluated')
    if (!result.ok) throw result.error
    return result.value
  }
}
