/**
 * math's `formula`: a small arithmetic language, parsed and evaluated here (never eval, never Function).
 * Numbers (`12`, `1.5`, `.5`, `2e3`), `+ - * / % ^` (`^` is a power, right-associative and tighter than a
 * leading minus: `-2^2` is -4), parentheses, and the functions min, max, abs, round, floor, ceil, sqrt.
 * Values come in through templates, resolved into the text before it is parsed (`{{$steps.a.total}} * 1.2`).
 */

export const maxFormulaLength = 1000
const maxDepth = 50

const functions: Readonly<Record<string, { min: number; max: number; apply: (...args: number[]) => number }>> = {
  min: { min: 1, max: Infinity, apply: Math.min },
  max: { min: 1, max: Infinity, apply: Math.max },
  abs: { min: 1, max: 1, apply: Math.abs },
  round: { min: 1, max: 1, apply: (x) => Math.sign(x) * Math.round(Math.abs(x)) },
  floor: { min: 1, max: 1, apply: Math.floor },
  ceil: { min: 1, max: 1, apply: Math.ceil },
  sqrt: { min: 1, max: 1, apply: Math.sqrt },
}

type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'name'; value: string; at: number }
  | { kind: 'op'; value: string; at: number }

/** Why a formula cannot be computed; `position` is the 0-based offset of what is wrong. */
export class FormulaError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} (at offset ${position})`)
    this.name = 'FormulaError'
  }
}

const numberToken = /^(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/
const nameToken = /^[A-Za-z_]\w*/

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const ch = text[i]!
    if (/\s/.test(ch)) {
      i += 1
      continue
    }
    const rest = text.slice(i, i + 400)
    const number = numberToken.exec(rest)
    if (number) {
      tokens.push({ kind: 'number', value: Number(number[0]), at: i })
      i += number[0].length
      continue
    }
    const name = nameToken.exec(rest)
    if (name) {
      tokens.push({ kind: 'name', value: name[0], at: i })
      i += name[0].length
      continue
    }
    if ('+-*/%^(),'.includes(ch)) {
      tokens.push({ kind: 'op', value: ch, at: i })
      i += 1
      continue
    }
    throw new FormulaError(`unexpected ${JSON.stringify(ch)}`, i)
  }
  return tokens
}

/**
 * Computes a formula. Throws FormulaError for a syntax error, an unknown function, a division by zero
 * or a result that is not a finite number.
 */
export function evaluateFormula(text: string): number {
  if (text.length > maxFormulaLength)
    throw new FormulaError(`the formula is longer than ${maxFormulaLength} characters`, maxFormulaLength)
  const tokens = tokenize(text)
  let at = 0
  const peek = (): Token | undefined => tokens[at]
  const where = (): number => peek()?.at ?? text.length
  const isOp = (value: string): boolean => {
    const token = peek()
    return token?.kind === 'op' && token.value === value
  }
  const expect = (value: string): void => {
    if (!isOp(value)) throw new FormulaError(`expected ${JSON.stringify(value)}`, where())
    at += 1
  }
  const finite = (value: number, position: number): number => {
    if (!Number.isFinite(value)) throw new FormulaError('the result is not a finite number', position)
    return value
  }

  function sum(depth: number): number {
    let value = product(depth)
    while (isOp('+') || isOp('-')) {
      const op = tokens[at++]!
      const right = product(depth)
      value = finite(op.value === '+' ? value + right : value - right, op.at)
    }
    return value
  }
  function product(depth: number): number {
    let value = unary(depth)
    while (isOp('*') || isOp('/') || isOp('%')) {
      const op = tokens[at++]!
      const right = unary(depth)
      if ((op.value === '/' || op.value === '%') && right === 0) throw new FormulaError('division by zero', op.at)
      value = finite(op.value === '*' ? value * right : op.value === '/' ? value / right : value % right, op.at)
    }
    return value
  }
  function unary(depth: number): number {
    if (depth > maxDepth) throw new FormulaError(`the formula nests deeper than ${maxDepth}`, where())
    if (isOp('-')) {
      at += 1
      return -unary(depth + 1)
    }
    if (isOp('+')) {
      at += 1
      return unary(depth + 1)
    }
    return power(depth)
  }
  function power(depth: number): number {
    const base = primary(depth)
    if (!isOp('^')) return base
    const op = tokens[at++]!
    return finite(base ** unary(depth + 1), op.at)
  }
  function primary(depth: number): number {
    const token = peek()
    if (!token) throw new FormulaError('the formula ends too early', text.length)
    if (token.kind === 'number') {
      at += 1
      return finite(token.value, token.at)
    }
    if (token.kind === 'op' && token.value === '(') {
      at += 1
      const value = sum(depth + 1)
      expect(')')
      return value
    }
    if (token.kind === 'name') {
      const fn = Object.hasOwn(functions, token.value) ? functions[token.value]! : null
      if (!fn)
        throw new FormulaError(
          `unknown name ${JSON.stringify(token.value)} (functions: ${Object.keys(functions).join(', ')})`,
          token.at,
        )
      at += 1
      expect('(')
      const args: number[] = []
      if (!isOp(')')) {
        args.push(sum(depth + 1))
        while (isOp(',')) {
          at += 1
          args.push(sum(depth + 1))
        }
      }
      expect(')')
      if (args.length < fn.min || args.length > fn.max)
        throw new FormulaError(
          `${token.value} takes ${fn.min === fn.max ? fn.min : `at least ${fn.min}`} argument${fn.min === 1 && fn.max === 1 ? '' : 's'}`,
          token.at,
        )
      return finite(fn.apply(...args), token.at)
    }
    throw new FormulaError(`unexpected ${JSON.stringify(token.value)}`, token.at)
  }

  if (tokens.length === 0) throw new FormulaError('the formula is empty', 0)
  const value = sum(0)
  if (at < tokens.length) throw new FormulaError(`unexpected ${JSON.stringify(String(tokens[at]!.value))}`, where())
  return value === 0 ? 0 : value
}
