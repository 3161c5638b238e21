import jsonata from 'jsonata'
import { isRecord } from './config-paths.js'
import type { ExpressionScope } from './expression-job.js'

/**
 * What a set of expressions reads, found in their syntax trees, so that only that crosses to the
 * evaluator process: every variable they name (all of it, or only the keys read right after it, as
 * `$steps.fetch` reads `fetch`), and whether they read their input `$` (then everything is sent).
 */
export interface ExpressionNeeds {
  readonly input: boolean
  readonly variables: ReadonlyMap<string, ReadonlySet<string> | 'all'>
}

interface Collecting {
  input: boolean
  variables: Map<string, Set<string> | 'all'>
}

const cacheSize = 500
const cache = new Map<string, ExpressionNeeds>()
// Parsing happens on the server's thread, and JSONata's parser takes time that grows faster than the text
// (a 10,000-character path: 170 ms): past these, expressions are not parsed here and get everything.
const maxParsedCode = 1000
const maxParsedBatch = 4000
const everything: ExpressionNeeds = Object.freeze({ input: true, variables: new Map() })

/** What one expression reads; one that does not parse reads nothing (its evaluation only reports the error). */
export function needsOf(code: string): ExpressionNeeds {
  let found = cache.get(code)
  if (found === undefined) {
    const out: Collecting = { input: false, variables: new Map() }
    let ast: unknown = null
    try {
      ast = jsonata(code).ast()
    } catch {
      // A syntax error: nothing to send.
    }
    try {
      walk(ast, true, out)
    } catch {
      out.input = true // nested beyond what the walk can follow: send everything
    }
    found = out
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
    cache.set(code, found)
  }
  return found
}

/**
 * The scope with only what `codes` read: unread roots left out, a root read by some keys cut to them.
 * Codes not parsed yet that are long (over 1,000 characters, or 4,000 together) are not parsed: the whole scope goes.
 */
export function narrowScope(scope: ExpressionScope, codes: readonly string[]): ExpressionScope {
  const unparsed = codes.filter((code) => !cache.has(code))
  const tooLong =
    unparsed.some((code) => code.length > maxParsedCode) ||
    unparsed.reduce((n, code) => n + code.length, 0) > maxParsedBatch
  const needs = tooLong ? everything : mergeNeeds(codes.map(needsOf))
  if (scope.kind === 'context') {
    if (needs.input) return scope
    const data: Record<string, unknown> = {}
    for (const [name, need] of needs.variables) {
      const key = `$${name}`
      if (Object.hasOwn(scope.data, key)) data[key] = pick(scope.data[key], need)
    }
    return { kind: 'context', data }
  }
  const variables: Record<string, unknown> = {}
  const input = needs.input ? scope.input : null
  for (const [name, value] of Object.entries(scope.variables)) {
    const need = name === input ? 'all' : needs.variables.get(name)
    if (need !== undefined) variables[name] = pick(value, need)
  }
  return { kind: 'variables', variables, input }
}

function mergeNeeds(list: readonly ExpressionNeeds[]): ExpressionNeeds {
  const out: Collecting = { input: false, variables: new Map() }
  for (const needs of list) {
    out.input ||= needs.input
    for (const [name, need] of needs.variables) {
      if (need === 'all') add(out, name, null)
      else for (const key of need) add(out, name, key)
    }
  }
  return out
}

function pick(value: unknown, need: ReadonlySet<string> | 'all'): unknown {
  // A key read on a list maps over its items: the list goes whole.
  if (need === 'all' || !isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of need) if (Object.hasOwn(value, key)) out[key] = value[key]
  return out
}

function add(out: Collecting, name: string, key: string | null): void {
  const known = out.variables.get(name)
  if (known === 'all') return
  if (key === null) out.variables.set(name, 'all')
  else if (known) known.add(key)
  else out.variables.set(name, new Set([key]))
}

// Children evaluated over what their parent produced, not over the input: a path's filters, sort terms
// and grouping.
const relative: ReadonlySet<string> = new Set(['predicate', 'stages', 'group', 'terms'])
// Nodes that read the input when they are evaluated over it.
const readers: ReadonlySet<string> = new Set(['name', 'wildcard', 'descendant'])

/** `atRoot`: this node is evaluated over the input `$` (conservatively: anything not known to be relative). */
function walk(node: unknown, atRoot: boolean, out: Collecting): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, atRoot, out)
    return
  }
  if (!isNode(node)) return
  if (node.type === 'variable') {
    const name = String(node.value)
    if (name === '$' || name === 'eval' || (name === '' && atRoot))
      out.input = true // $$, $eval (reads anything), $ at the top
    else if (name !== '') add(out, name, null)
  } else if ((readers.has(node.type) && atRoot) || node.type === 'parent') {
    out.input = true // `%` may climb back to the input from anywhere
  }
  for (const [key, child] of Object.entries(node)) {
    if (key === 'steps' && Array.isArray(child)) walkSteps(child, atRoot, out)
    else if (typeof child === 'object' && child !== null) walk(child, relative.has(key) ? false : atRoot, out)
  }
}

/** A path: its first step over the current input, the others over what the step before gave. `$v.key` reads only `key` of `$v`. */
function walkSteps(steps: readonly unknown[], atRoot: boolean, out: Collecting): void {
  const [first, second] = steps
  const plainVariable =
    isNode(first) &&
    first.type === 'variable' &&
    typeof first.value === 'string' &&
    first.value !== '' &&
    first.value !== '$' &&
    first.value !== 'eval' &&
    !first.predicate &&
    !first.stages
  if (plainVariable && isNode(second) && second.type === 'name' && typeof second.value === 'string')
    add(out, first.value as string, second.value)
  else walk(first, atRoot, out)
  for (const step of steps.slice(1)) walk(step, false, out)
}

/** A syntax tree node (JSONata's parser makes them from prototypes, so not plain objects). */
function isNode(value: unknown): value is Record<string, unknown> & { type: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { type?: unknown }).type === 'string'
  )
}
