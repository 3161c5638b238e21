/**
 * `validationRules.pattern`: a regular expression source (JavaScript syntax, `u` flag, not anchored
 * implicitly). JavaScript's own engine backtracks, so `(a+)+$` or `.*.*.*x` can stall the process on a
 * short hostile value. Patterns are therefore matched by a Thompson NFA simulation here, in time linear in
 * the value (at most `states` × value length steps); single characters and classes are still tested by
 * the native engine, one code point at a time, so their meaning is JavaScript's. What an NFA cannot do is
 * refused when the field is defined: backreferences and lookarounds. Values longer than `inputChars` are
 * refused without matching.
 */
export const patternLimits = { sourceChars: 200, inputChars: 2000, states: 1000 } as const

type Assertion = 'start' | 'end' | 'boundary' | 'notBoundary'
type CharTest = (cp: number) => boolean

type Node =
  | { kind: 'char'; test: CharTest }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number }
  | { kind: 'assert'; which: Assertion }

type State =
  | { kind: 'char'; test: CharTest; out: number }
  | { kind: 'split'; out: number[] }
  | { kind: 'assert'; which: Assertion; out: number }
  | { kind: 'match' }

interface Nfa {
  states: State[]
  start: number
}

class UnsupportedPattern extends Error {}

/** A problem with a pattern source, or null when it is accepted. */
export function checkPattern(source: string): string | null {
  if (source.length > patternLimits.sourceChars) return `pattern is longer than ${patternLimits.sourceChars} characters`
  try {
    new RegExp(source, 'u')
  } catch {
    return 'pattern is not a valid regular expression'
  }
  try {
    compilePattern(source)
    return null
  } catch (err) {
    if (err instanceof UnsupportedPattern) return err.message
    throw err
  }
}

/** Whether `value` matches the (checked) pattern, in linear time; the caller bounds the value to `inputChars`. */
export function matchesPattern(source: string, value: string): boolean {
  return runNfa(compilePattern(source), value)
}

function compilePattern(source: string): Nfa {
  const parser = new Parser(source)
  const tree = parser.parseAlternation()
  const states: State[] = [{ kind: 'match' }]
  const start = build(tree, 0, states)
  return { states, start }
}

// ---- parsing: the source is already valid in `u` mode, so a `{` always starts a quantifier ----

class Parser {
  private i = 0
  constructor(private readonly src: string) {}

  parseAlternation(): Node {
    const options = [this.parseSequence()]
    while (this.src[this.i] === '|') {
      this.i += 1
      options.push(this.parseSequence())
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options }
  }

  private parseSequence(): Node {
    const items: Node[] = []
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atom = this.parseAtom()
      const quantifier = readQuantifier(this.src, this.i)
      if (quantifier) {
        this.i = quantifier.end
        items.push({ kind: 'repeat', node: atom, min: quantifier.min, max: quantifier.max })
      } else {
        items.push(atom)
      }
    }
    return { kind: 'seq', items }
  }

  private parseAtom(): Node {
    const src = this.src
    const ch = src[this.i]!
    if (ch === '(') {
      this.i += 1
      if (src[this.i] === '?') {
        const kind = src[this.i + 1]
        const after = src[this.i + 2]
        if (kind === ':') this.i += 2
        else if (kind === '<' && after !== '=' && after !== '!') this.i = src.indexOf('>', this.i) + 1
        else throw new UnsupportedPattern('pattern may not use lookahead or lookbehind')
      }
      const inner = this.parseAlternation()
      this.i += 1
      return inner
    }
    if (ch === '^' || ch === '$') {
      this.i += 1
      return { kind: 'assert', which: ch === '^' ? 'start' : 'end' }
    }
    if (ch === '.') {
      this.i += 1
      return { kind: 'char', test: notLineTerminator }
    }
    if (ch === '[') {
      const from = this.i
      this.i = classEnd(src, this.i + 1)
      return nativeChar(src.slice(from, this.i))
    }
    if (ch === '\\') return this.parseEscape()
    const cp = src.codePointAt(this.i)!
    this.i += cp > 0xffff ? 2 : 1
    return { kind: 'char', test: (c) => c === cp }
  }

  private parseEscape(): Node {
    const src = this.src
    const from = this.i
    const next = src[this.i + 1] ?? ''
    if (next === 'b' || next === 'B') {
      this.i += 2
      return { kind: 'assert', which: next === 'b' ? 'boundary' : 'notBoundary' }
    }
    if (/[1-9]/.test(next) || next === 'k') throw new UnsupportedPattern('pattern may not use backreferences')
    this.i += 2
    if ((next === 'p' || next === 'P' || next === 'u') && src[this.i] === '{') {
      this.i = src.indexOf('}', this.i) + 1
    } else if (next === 'u') {
      const unit = parseInt(src.slice(this.i, this.i + 4), 16)
      this.i += 4
      // A surrogate pair written as two escapes is one code point in `u` mode.
      if (unit >= 0xd800 && unit <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(src.slice(this.i, this.i + 6))) this.i += 6
    } else if (next === 'x') {
      this.i += 2
    } else if (next === 'c') {
      this.i += 1
    }
    return nativeChar(src.slice(from, this.i))
  }
}

function classEnd(source: string, from: number): number {
  let i = from
  while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1
  return i + 1
}

function readQuantifier(source: string, at: number): { min: number; max: number; end: number } | null {
  const ch = source[at]
  let min: number
  let max: number
  let end: number
  if (ch === '*' || ch === '+' || ch === '?') {
    min = ch === '+' ? 1 : 0
    max = ch === '?' ? 1 : Number.POSITIVE_INFINITY
    end = at + 1
  } else if (ch === '{') {
    const close = source.indexOf('}', at)
    const [low = '', high] = source.slice(at + 1, close).split(',')
    min = Number(low)
    max = high === undefined ? min : high === '' ? Number.POSITIVE_INFINITY : Number(high)
    end = close + 1
  } else {
    return null
  }
  if (source[end] === '?') end += 1 // lazy: the same language, and `test` only asks whether there is a match
  return { min, max, end }
}

// One character or class, tested by the native engine on a single code point (memoised per atom).
function nativeChar(atom: string): Node {
  const re = new RegExp(`^(?:${atom})$`, 'u')
  const memo = new Map<number, boolean>()
  return {
    kind: 'char',
    test(cp) {
      let hit = memo.get(cp)
      if (hit === undefined) {
        hit = re.test(String.fromCodePoint(cp))
        memo.set(cp, hit)
      }
      return hit
    },
  }
}

const notLineTerminator: CharTest = (cp) => cp !== 0x0a && cp !== 0x0d && cp !== 0x2028 && cp !== 0x2029

// ---- building: each node is compiled in front of its continuation `next`, so states are made back to front ----

function build(node: Node, next: number, states: State[]): number {
  const push = (state: State): number => {
    if (states.length >= patternLimits.states) {
      throw new UnsupportedPattern(`pattern is too large once its repetitions are expanded (over ${patternLimits.states} states)`)
    }
    states.push(state)
    return states.length - 1
  }
  switch (node.kind) {
    case 'char':
      return push({ kind: 'char', test: node.test, out: next })
    case 'assert':
      return push({ kind: 'assert', which: node.which, out: next })
    case 'seq':
      return node.items.reduceRight((entry, item) => build(item, entry, states), next)
    case 'alt':
      return push({ kind: 'split', out: node.options.map((option) => build(option, next, states)) })
    case 'repeat': {
      let entry = next
      if (node.max === Number.POSITIVE_INFINITY) {
        const split: State & { kind: 'split' } = { kind: 'split', out: [] }
        const loop = push(split)
        split.out = [build(node.node, loop, states), next]
        entry = loop
      } else {
        for (let k = node.min; k < node.max; k++) entry = push({ kind: 'split', out: [build(node.node, entry, states), next] })
      }
      for (let k = 0; k < node.min; k++) entry = build(node.node, entry, states)
      return entry
    }
  }
}

// ---- running: all live states advance together over the value's code points ----

function runNfa({ states, start }: Nfa, value: string): boolean {
  const cps = Array.from(value, (c) => c.codePointAt(0)!)
  const marks = new Int32Array(states.length).fill(-1)
  let generation = 0
  const isWord = (cp: number | undefined): boolean =>
    cp !== undefined && ((cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || cp === 95)
  const holds = (which: Assertion, pos: number): boolean => {
    if (which === 'start') return pos === 0
    if (which === 'end') return pos === cps.length
    const boundary = isWord(cps[pos - 1]) !== isWord(cps[pos])
    return which === 'boundary' ? boundary : !boundary
  }
  // Adds `from` and everything reachable without consuming a character; epsilon cycles stop at the marks.
  const close = (list: number[], from: number, pos: number): void => {
    const stack = [from]
    while (stack.length > 0) {
      const id = stack.pop()!
      if (marks[id] === generation) continue
      marks[id] = generation
      const state = states[id]!
      if (state.kind === 'split') stack.push(...state.out)
      else if (state.kind === 'assert') {
        if (holds(state.which, pos)) stack.push(state.out)
      } else list.push(id)
    }
  }
  let current: number[] = []
  close(current, start, 0)
  for (let pos = 0; ; pos++) {
    if (current.some((id) => states[id]!.kind === 'match')) return true
    if (pos === cps.length) return false
    const cp = cps[pos]!
    const next: number[] = []
    generation += 1
    for (const id of current) {
      const state = states[id]!
      if (state.kind === 'char' && state.test(cp)) close(next, state.out, pos + 1)
    }
    close(next, start, pos + 1) // not anchored: a match may start at any position
    current = next
  }
}
