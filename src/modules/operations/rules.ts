import { isDeepStrictEqual } from 'node:util'
import { checkTemplate, checkTemplates, createTemplateBudget, lookupPath, parseTemplate, resolveTemplate, type PathPart, type TemplateBudget } from '../../lib/template/index.js'
import { isRecord, type ConfigPath } from './config-paths.js'
import { expressionCodes, precomputeExpressions, type Evaluate } from './expressions.js'
import { maxResolvedLength } from './prepare.js'
import { boundedTest, checkPattern } from './safe-regex.js'
import { StepError } from './types.js'

/**
 * The condition rule tree (automation spec "condition"; a step's `condition` setting): a leaf compares a
 * field with a value, `{ field, operator, value? }`, and groups combine rules, `{ _and: [...] }`,
 * `{ _or: [...] }`. `field` is a template path (`$trigger.body.status`) or a template (`{{= $count($steps.a) }}`);
 * `value` may hold templates. Checked when the flow is saved (parseRule), evaluated at run time.
 */

export const ruleOperators = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'starts_with', 'ends_with', 'is_null', 'is_empty', 'matches'] as const
export type RuleOperator = (typeof ruleOperators)[number]

/** The roots a flow's templates may start with. */
export const templateRoots = ['$trigger', '$steps', '$user', '$flow', '$run', '$now'] as const

const operatorSet: ReadonlySet<string> = new Set(ruleOperators)
/** Operators whose value may be left out: `is_null` and `is_empty` take an optional boolean (false negates). */
const valueOptional: ReadonlySet<string> = new Set(['is_null', 'is_empty'])
const leafKeys: ReadonlySet<string> = new Set(['field', 'operator', 'value', 'flags'])
const maxDepth = 10
const maxLeaves = 100
const maxFieldLength = 1000

/** Where a leaf's field comes from: a path read from the context, or a template resolved over it. */
export type FieldSource = { readonly kind: 'path'; readonly path: PathPart } | { readonly kind: 'template'; readonly text: string }

/** A parsed rule tree: frozen nodes with a `kind`. */
export type RuleNode =
  | { readonly kind: 'all'; readonly rules: readonly RuleNode[] }
  | { readonly kind: 'any'; readonly rules: readonly RuleNode[] }
  | {
      readonly kind: 'compare'
      readonly field: FieldSource
      readonly operator: RuleOperator
      /** As written: templates are resolved when the rule is evaluated. */
      readonly value: unknown
      readonly flags: string
      /** A literal `matches` pattern, compiled once when parsed. */
      readonly pattern: RegExp | null
    }

/** What is wrong in a rule tree and where (`_and[1].operator`). */
export interface RuleIssue {
  readonly path: ConfigPath
  readonly message: string
}

export type ParsedRule = { ok: true; rule: RuleNode } | { ok: false; issues: RuleIssue[] }

/** Parses and checks a rule tree: its shape, operators, values, templates (with the flow's roots) and `matches` patterns. Throws nothing. */
export function parseRule(tree: unknown, options: { roots?: readonly string[] } = {}): ParsedRule {
  const roots = options.roots ?? templateRoots
  const issues: RuleIssue[] = []
  const counter = { leaves: 0 }
  const rule = parseNode(tree, [], 0, roots, issues, counter)
  return issues.length === 0 && rule ? { ok: true, rule } : { ok: false, issues }
}

function parseNode(node: unknown, path: ConfigPath, depth: number, roots: readonly string[], issues: RuleIssue[], counter: { leaves: number }): RuleNode | null {
  if (!isRecord(node)) {
    issues.push({ path, message: 'must be an object: { field, operator, value } or { _and: [...] } or { _or: [...] }' })
    return null
  }
  const group = '_and' in node ? '_and' : '_or' in node ? '_or' : null
  if (group) {
    if (Object.keys(node).length !== 1) {
      issues.push({ path, message: `a group holds only ${group}` })
      return null
    }
    if (depth >= maxDepth) {
      issues.push({ path, message: `groups nest at most ${maxDepth} deep` })
      return null
    }
    const list = node[group]
    if (!Array.isArray(list)) {
      issues.push({ path: [...path, group], message: 'must be an array of rules' })
      return null
    }
    const rules = list.map((child, index) => parseNode(child, [...path, group, index], depth + 1, roots, issues, counter))
    if (rules.some((r) => r === null)) return null
    return Object.freeze({ kind: group === '_and' ? 'all' : 'any', rules: Object.freeze(rules as RuleNode[]) })
  }
  counter.leaves += 1
  if (counter.leaves === maxLeaves + 1) issues.push({ path, message: `a rule tree holds at most ${maxLeaves} comparisons` })
  return parseLeaf(node, path, roots, issues)
}

function parseLeaf(node: Record<string, unknown>, path: ConfigPath, roots: readonly string[], issues: RuleIssue[]): RuleNode | null {
  const before = issues.length
  for (const key of Object.keys(node)) if (!leafKeys.has(key)) issues.push({ path: [...path, key], message: `unknown key (a rule has field, operator, value, flags; groups are _and and _or)` })
  const field = parseField(node.field, [...path, 'field'], roots, issues)
  const operator = node.operator
  if (typeof operator !== 'string' || !operatorSet.has(operator)) {
    issues.push({ path: [...path, 'operator'], message: `must be one of ${ruleOperators.join(', ')}` })
    return null
  }
  const flags = node.flags ?? ''
  if (typeof flags !== 'string' || (operator !== 'matches' && flags !== '')) issues.push({ path: [...path, 'flags'], message: 'flags belong to matches only, as a string of i, m, s, u' })
  const hasValue = Object.hasOwn(node, 'value') && node.value !== undefined
  const value = node.value
  const valuePath = [...path, 'value']
  if (!hasValue && !valueOptional.has(operator)) issues.push({ path: valuePath, message: `${operator} needs a value` })
  for (const issue of checkTemplates(value, { roots })) issues.push({ path: valuePath, message: `${issue.path ? `${issue.path}: ` : ''}${issue.message}` })
  const templated = typeof value === 'string' && value.includes('{{')
  let pattern: RegExp | null = null
  if (hasValue && !templated) {
    if ((operator === 'in' || operator === 'nin') && !Array.isArray(value)) issues.push({ path: valuePath, message: `${operator} needs an array (or a template giving one)` })
    if (valueOptional.has(operator) && typeof value !== 'boolean') issues.push({ path: valuePath, message: `${operator} takes true (the default) or false` })
    if (operator === 'matches') {
      if (typeof value !== 'string') issues.push({ path: valuePath, message: 'matches needs a regular expression as a string' })
      else {
        const refused = checkPattern(value, typeof flags === 'string' ? flags : '')
        if (refused) issues.push({ path: valuePath, message: refused })
        else pattern = new RegExp(value, flags as string)
      }
    }
  }
  if (issues.length > before || !field) return null
  return Object.freeze({ kind: 'compare', field, operator: operator as RuleOperator, value: hasValue ? value : undefined, flags: flags as string, pattern })
}

function parseField(field: unknown, path: ConfigPath, roots: readonly string[], issues: RuleIssue[]): FieldSource | null {
  if (typeof field !== 'string' || field.trim() === '' || field.length > maxFieldLength) {
    issues.push({ path, message: `must be a template path such as $trigger.body.status (1-${maxFieldLength} characters)` })
    return null
  }
  if (field.includes('{{')) {
    const error = checkTemplate(field, { roots })
    if (error) {
      issues.push({ path, message: error.message })
      return null
    }
    return Object.freeze({ kind: 'template', text: field })
  }
  const parsed = parseTemplate(`{{${field}}}`)
  const tag = parsed.ok ? parsed.template.whole : null
  if (!tag || tag.kind !== 'path') {
    issues.push({ path, message: `${JSON.stringify(field)} is not a template path such as $trigger.body.status` })
    return null
  }
  if (!roots.includes(tag.root)) {
    issues.push({ path, message: `${tag.root} is not available here (roots: ${roots.join(', ')})` })
    return null
  }
  return Object.freeze({ kind: 'path', path: tag })
}

/**
 * Evaluates a parsed rule over a template context; `evaluate` answers `{{= }}` codes (precomputed
 * JSONata). A field or value that does not resolve counts as null. Throws an Error when a comparison
 * cannot be made (a templated `in` value that is not a list, a templated pattern refused, a match over
 * its bounds) or the templates of the tree give more than `budget` (maxResolvedLength) in all.
 */
export function evaluateRule(rule: RuleNode, data: unknown, evaluate?: Evaluate, budget: TemplateBudget = createTemplateBudget(maxResolvedLength)): boolean {
  if (rule.kind === 'all') return rule.rules.every((r) => evaluateRule(r, data, evaluate, budget))
  if (rule.kind === 'any') return rule.rules.some((r) => evaluateRule(r, data, evaluate, budget))
  const options = { budget, ...(evaluate ? { evaluate } : {}) }
  const field = fieldValue(rule.field, data, options)
  const value = resolveValue(rule.value, data, options)
  // A tree whose templates name large values many times: refused rather than copied over and over.
  if (budget.exceeded) throw new Error(`The rule's templates would give more than ${budget.limit} characters in all`)
  return compare(rule, field, value)
}

type ResolveWith = { readonly budget: TemplateBudget; readonly evaluate?: Evaluate }

function fieldValue(field: FieldSource, data: unknown, options: ResolveWith): unknown {
  if (field.kind === 'path') {
    const found = lookupPath(data, field.path)
    return found.ok ? found.value : null
  }
  const result = resolveTemplate(field.text, data, options)
  return result.unresolved.length > 0 && result.value === '' ? null : result.value
}

function resolveValue(value: unknown, data: unknown, options: ResolveWith): unknown {
  if (typeof value === 'string') {
    if (!value.includes('{{')) return value
    if (options.budget.exceeded) return null
    const result = resolveTemplate(value, data, options)
    return result.unresolved.length > 0 && result.value === '' ? null : result.value
  }
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, data, options))
  return value
}

function compare(rule: Extract<RuleNode, { kind: 'compare' }>, field: unknown, value: unknown): boolean {
  switch (rule.operator) {
    case 'eq':
      return same(field, value)
    case 'neq':
      return !same(field, value)
    case 'gt':
      return ordered(field, value, (o) => o > 0)
    case 'gte':
      return ordered(field, value, (o) => o >= 0)
    case 'lt':
      return ordered(field, value, (o) => o < 0)
    case 'lte':
      return ordered(field, value, (o) => o <= 0)
    case 'in':
      return listOf(rule.operator, value).some((item) => same(field, item))
    case 'nin':
      return !listOf(rule.operator, value).some((item) => same(field, item))
    case 'contains':
      if (Array.isArray(field)) return field.some((item) => same(item, value))
      return textOf(field) !== null && textOf(value) !== null && textOf(field)!.includes(textOf(value)!)
    case 'starts_with':
      return textOf(field) !== null && textOf(value) !== null && textOf(field)!.startsWith(textOf(value)!)
    case 'ends_with':
      return textOf(field) !== null && textOf(value) !== null && textOf(field)!.endsWith(textOf(value)!)
    case 'is_null':
      return (field === null || field === undefined) === (value !== false)
    case 'is_empty':
      return isEmpty(field) === (value !== false)
    case 'matches':
      return matches(rule, field, value)
  }
}

/** Numbers and numeric strings compare as numbers when either side is a number; booleans equal their "true"/"false" spelling; the rest structurally (eq; switch's cases). */
export function same(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null
  if (b === undefined) b = null
  if (a === b) return true
  if (typeof a === 'number' || typeof b === 'number') {
    const x = numberOf(a)
    const y = numberOf(b)
    return x !== null && y !== null && x === y
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') return (typeof a === 'string' || typeof b === 'string') && String(a) === String(b)
  return isDeepStrictEqual(a, b)
}

/** Both numbers (or numeric strings): numerically; both strings: by code unit (ISO 8601 dates order correctly); otherwise not ordered (null: the comparison is false). */
function order(a: unknown, b: unknown): number | null {
  const x = numberOf(a)
  const y = numberOf(b)
  if (x !== null && y !== null) return x === y ? 0 : x < y ? -1 : 1
  if (typeof a === 'string' && typeof b === 'string') return a === b ? 0 : a < b ? -1 : 1
  return null
}

function ordered(a: unknown, b: unknown, test: (order: number) => boolean): boolean {
  const o = order(a, b)
  return o !== null && test(o)
}

const numeric = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/

/** A finite number, or a string that spells one; else null. */
export function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'string' && numeric.test(value)) {
    const n = Number(value)
    return Number.isFinite(n) ? n : null
  }
  return null
}

function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return null
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true
  if (Array.isArray(value)) return value.length === 0
  return isRecord(value) && Object.keys(value).length === 0
}

function listOf(operator: string, value: unknown): unknown[] {
  if (Array.isArray(value)) return value
  throw new Error(`${operator} needs a list, and its value gave ${value === null ? 'nothing' : `a ${typeof value}`}`)
}

function matches(rule: Extract<RuleNode, { kind: 'compare' }>, field: unknown, value: unknown): boolean {
  let pattern = rule.pattern
  if (!pattern) {
    if (typeof value !== 'string') throw new Error('matches needs its value to be a regular expression as a string')
    const refused = checkPattern(value, rule.flags)
    if (refused) throw new Error(`matches: ${refused}`)
    pattern = new RegExp(value, rule.flags)
  }
  const text = textOf(field)
  if (text === null) return false
  try {
    return boundedTest(pattern, text)
  } catch (err) {
    throw new Error(`matches: ${(err as Error).message}`, { cause: err })
  }
}

/** Every `{{= }}` code in a parsed rule's fields and values, for evaluating them ahead (JSONata is asynchronous). */
function ruleExpressions(rule: RuleNode, out: string[] = []): string[] {
  if (rule.kind !== 'compare') {
    for (const child of rule.rules) ruleExpressions(child, out)
    return out
  }
  if (rule.field.kind === 'template') out.push(...expressionCodes(rule.field.text))
  const visit = (value: unknown): void => {
    if (typeof value === 'string') out.push(...expressionCodes(value))
    else if (Array.isArray(value)) value.forEach(visit)
  }
  visit(rule.value)
  return out
}

/**
 * Parses and evaluates a rule tree over a run's template context. Throws StepError invalid_condition
 * (a tree that does not parse: one saved before checks existed) or condition_failed (a comparison that
 * cannot be made); neither is retried.
 */
export async function evaluateRuleTree(tree: unknown, data: Readonly<Record<string, unknown>>): Promise<boolean> {
  const parsed = parseRule(tree)
  if (!parsed.ok) {
    const first = parsed.issues[0]!
    throw new StepError('invalid_condition', `Invalid rule at ${describePath(first.path)}: ${first.message}`, { issues: parsed.issues.map((i) => ({ path: describePath(i.path), message: i.message })) }, 400, false)
  }
  const codes = ruleExpressions(parsed.rule)
  const evaluate = codes.length > 0 ? await precomputeExpressions(codes, data) : undefined
  try {
    return evaluateRule(parsed.rule, data, evaluate)
  } catch (err) {
    throw new StepError('condition_failed', (err as Error).message, {}, 400, false)
  }
}

function describePath(path: ConfigPath): string {
  return path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '') || 'the rule'
}
