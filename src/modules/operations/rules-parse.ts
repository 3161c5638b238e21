import { checkTemplate, checkTemplates, parseTemplate, type PathPart } from '../../lib/template/index.js'
import { isRecord, type ConfigPath } from './config-paths.js'
import { checkPattern } from './safe-regex.js'

// The rule tree's nodes and their checks when a flow is saved (see rules.ts).

export const ruleOperators = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'contains',
  'starts_with',
  'ends_with',
  'is_null',
  'is_empty',
  'matches',
] as const
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
export type FieldSource =
  | { readonly kind: 'path'; readonly path: PathPart }
  | { readonly kind: 'template'; readonly text: string }

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

function parseNode(
  node: unknown,
  path: ConfigPath,
  depth: number,
  roots: readonly string[],
  issues: RuleIssue[],
  counter: { leaves: number },
): RuleNode | null {
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
    const rules = list.map((child, index) =>
      parseNode(child, [...path, group, index], depth + 1, roots, issues, counter),
    )
    if (rules.some((r) => r === null)) return null
    return Object.freeze({ kind: group === '_and' ? 'all' : 'any', rules: Object.freeze(rules as RuleNode[]) })
  }
  counter.leaves += 1
  if (counter.leaves === maxLeaves + 1)
    issues.push({ path, message: `a rule tree holds at most ${maxLeaves} comparisons` })
  return parseLeaf(node, path, roots, issues)
}

function parseLeaf(
  node: Record<string, unknown>,
  path: ConfigPath,
  roots: readonly string[],
  issues: RuleIssue[],
): RuleNode | null {
  const before = issues.length
  for (const key of Object.keys(node))
    if (!leafKeys.has(key))
      issues.push({
        path: [...path, key],
        message: `unknown key (a rule has field, operator, value, flags; groups are _and and _or)`,
      })
  const field = parseField(node.field, [...path, 'field'], roots, issues)
  const operator = node.operator
  if (typeof operator !== 'string' || !operatorSet.has(operator)) {
    issues.push({ path: [...path, 'operator'], message: `must be one of ${ruleOperators.join(', ')}` })
    return null
  }
  const flags = node.flags ?? ''
  if (typeof flags !== 'string' || (operator !== 'matches' && flags !== ''))
    issues.push({ path: [...path, 'flags'], message: 'flags belong to matches only, as a string of i, m, s, u' })
  const hasValue = Object.hasOwn(node, 'value') && node.value !== undefined
  const value = node.value
  const valuePath = [...path, 'value']
  if (!hasValue && !valueOptional.has(operator)) issues.push({ path: valuePath, message: `${operator} needs a value` })
  for (const issue of checkTemplates(value, { roots }))
    issues.push({ path: valuePath, message: `${issue.path ? `${issue.path}: ` : ''}${issue.message}` })
  const templated = typeof value === 'string' && value.includes('{{')
  let pattern: RegExp | null = null
  if (hasValue && !templated) {
    if ((operator === 'in' || operator === 'nin') && !Array.isArray(value))
      issues.push({ path: valuePath, message: `${operator} needs an array (or a template giving one)` })
    if (valueOptional.has(operator) && typeof value !== 'boolean')
      issues.push({ path: valuePath, message: `${operator} takes true (the default) or false` })
    if (operator === 'matches') {
      if (typeof value !== 'string')
        issues.push({ path: valuePath, message: 'matches needs a regular expression as a string' })
      else {
        const refused = checkPattern(value, typeof flags === 'string' ? flags : '')
        if (refused) issues.push({ path: valuePath, message: refused })
        else pattern = new RegExp(value, flags as string)
      }
    }
  }
  if (issues.length > before || !field) return null
  return Object.freeze({
    kind: 'compare',
    field,
    operator: operator as RuleOperator,
    value: hasValue ? value : undefined,
    flags: flags as string,
    pattern,
  })
}

function parseField(
  field: unknown,
  path: ConfigPath,
  roots: readonly string[],
  issues: RuleIssue[],
): FieldSource | null {
  if (typeof field !== 'string' || field.trim() === '' || field.length > maxFieldLength) {
    issues.push({
      path,
      message: `must be a template path such as $trigger.body.status (1-${maxFieldLength} characters)`,
    })
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
