import jsonata from 'jsonata'
import { jsonSize } from '../../lib/json-size.js'
import { linearRegExp } from './safe-regex.js'

/**
 * The bounds of every JSONata evaluation (`{{= }}` templates, run_expression), besides its time. They make
 * most attempts on the evaluator's memory fail at once with a clear message; the evaluator's own process
 * (expressions.ts) bounds what they do not foresee.
 */
export const expressionLimits = Object.freeze({
  /** How deep evaluation may nest (recursive functions). */
  stack: 200,
  /** The longest sequence, and the longest list an operator or function may build. */
  sequence: 100_000,
  /** The longest string an operator or function may build, in characters. */
  maxStringLength: 5_000_000,
  /** The largest result, in characters of its JSON. */
  maxResultLength: 20_000_000,
})

/** A bound that was hit: thrown inside JSONata like its own errors (`code`, `message`). */
export class ExpressionLimit {
  readonly code = 'limit_exceeded'
  constructor(
    readonly message: string,
    readonly position?: number,
  ) {}
}

/**
 * JSONata's regular expressions (`$match`, `$replace`, `/…/`) run on the same linear-time engine (RE2) as
 * a rule's `matches`, since nothing stops a backtracking engine mid-match but killing its process.
 */
export function GuardedRegExp(pattern: string | RegExp, flags?: string): RegExp {
  return linearRegExp(pattern, flags)
}

/** Compiles with the bounds above and `timeoutMs`. Throws JSONata's syntax error. */
export function compileBounded(code: string, timeoutMs: number, builtins: Builtins): jsonata.Expression {
  const expression = jsonata(code, {
    timeout: timeoutMs,
    stack: expressionLimits.stack,
    sequence: expressionLimits.sequence,
    RegexEngine: GuardedRegExp as unknown as RegExpConstructor,
  })
  // JSONata calls this after every node; only nodes that build something new are checked, so data the
  // expression merely reads passes whatever its size.
  expression.assign(Symbol.for('jsonata.__evaluate_exit') as unknown as string, checkBuilt)
  for (const [name, guard] of Object.entries(guards)) {
    const builtin = builtins[name as keyof typeof guards]
    expression.registerFunction(
      name,
      function (this: jsonata.Focus, ...args: unknown[]) {
        guard(args)
        return builtin.implementation.apply(this, args)
      },
      builtin.signature,
    )
  }
  return expression
}

const building: ReadonlySet<string> = new Set(['function', 'partial', 'apply', 'binary', 'unary', 'transform'])

function checkBuilt(
  node: { type: string; position?: number },
  _input: unknown,
  _environment: unknown,
  result: unknown,
): void {
  if (!building.has(node.type)) return
  if (typeof result === 'string' && result.length > expressionLimits.maxStringLength) {
    throw new ExpressionLimit(
      `A string of ${result.length} characters is longer than the ${expressionLimits.maxStringLength} an expression may build`,
      node.position,
    )
  }
  if (Array.isArray(result) && result.length > expressionLimits.sequence) {
    throw new ExpressionLimit(
      `A list of ${result.length} items is longer than the ${expressionLimits.sequence} an expression may build`,
      node.position,
    )
  }
}

const tooLong = (what: string, length: number) =>
  new ExpressionLimit(
    `${what} would be ${length} characters, longer than the ${expressionLimits.maxStringLength} an expression may build`,
  )

/** Builtins whose output a small input can make huge, checked before they run (they cannot be interrupted once they do). */
const guards = {
  pad(args: unknown[]) {
    const width = Math.abs(Math.trunc(Number(args[1])))
    if (width > expressionLimits.maxStringLength) throw tooLong('$pad', width)
  },
  join(args: unknown[]) {
    const [strings, separator] = args as [unknown, unknown]
    if (!Array.isArray(strings)) return
    const sep = typeof separator === 'string' ? separator.length : 0
    let length = sep * Math.max(0, strings.length - 1)
    for (const item of strings) length += typeof item === 'string' ? item.length : 0
    if (length > expressionLimits.maxStringLength) throw tooLong('$join', length)
  },
  string(args: unknown[]) {
    const [value, prettify] = args
    if (typeof value !== 'object' || value === null) return
    const length = jsonSize(value, expressionLimits.maxStringLength, { indent: prettify === true })
    if (length > expressionLimits.maxStringLength) throw tooLong('$string', length)
  },
} satisfies Record<string, (args: unknown[]) => void>

interface Builtin {
  readonly implementation: (...args: unknown[]) => unknown
  readonly signature: string
}
export type Builtins = Readonly<Record<keyof typeof guards, Builtin>>

/** JSONata's own implementations of the guarded builtins (as `$pad` evaluates to), so the guarded ones behave exactly alike. */
export async function loadBuiltins(): Promise<Builtins> {
  const entries = await Promise.all(
    Object.keys(guards).map(async (name) => {
      const found = (await jsonata(`$${name}`).evaluate({})) as {
        implementation: Builtin['implementation']
        signature: { definition: string }
      }
      return [name, { implementation: found.implementation, signature: found.signature.definition }] as const
    }),
  )
  return Object.fromEntries(entries) as unknown as Builtins
}

/** An expression's result as plain data (see plain), refused past maxResultLength. Throws ExpressionLimit. */
export function boundedResult(value: unknown): unknown {
  const copy = plain(value)
  const size = jsonSize(copy, expressionLimits.maxResultLength)
  if (size > expressionLimits.maxResultLength)
    throw new ExpressionLimit(`The result would be over ${expressionLimits.maxResultLength} characters of JSON`)
  return copy
}

/**
 * JSONata's results as plain data: arrays without their sequence flags; functions (JSONata's lambdas are
 * objects holding their environment), regexes and cycles left out.
 */
export function plain(value: unknown, seen: Set<object> = new Set()): unknown {
  if (value === null || typeof value !== 'object')
    return typeof value === 'function' || typeof value === 'symbol' ? undefined : value
  if (value instanceof RegExp || seen.has(value) || '_jsonata_lambda' in value || '_jsonata_function' in value)
    return undefined
  seen.add(value)
  let out: unknown
  if (Array.isArray(value)) {
    out = value.map((item) => plain(item, seen)).filter((item) => item !== undefined)
  } else {
    // No prototype: a `__proto__` key in the data stays an ordinary key.
    const copy: Record<string, unknown> = Object.create(null) as Record<string, unknown>
    for (const [key, item] of Object.entries(value)) {
      const copied = plain(item, seen)
      if (copied !== undefined) copy[key] = copied
    }
    out = copy
  }
  seen.delete(value)
  return out
}
