import { createTemplateBudget, lookupPath, resolveTemplate, type TemplateBudget } from '../../lib/template/index.js'
import { expressionCodes, type Evaluate } from './expressions.js'
import { maxResolvedLength } from './prepare.js'
import { compare } from './rules-compare.js'
import type { FieldSource, RuleNode } from './rules-parse.js'

// A parsed rule tree evaluated over a run's template context (see rules.ts).

/**
 * Evaluates a parsed rule over a template context; `evaluate` answers `{{= }}` codes (precomputed
 * JSONata). A field or value that does not resolve counts as null. Throws an Error when a comparison
 * cannot be made (a templated `in` value that is not a list, a templated pattern refused, a match over
 * its bounds) or the templates of the tree give more than `budget` (maxResolvedLength) in all.
 */
export function evaluateRule(
  rule: RuleNode,
  data: unknown,
  evaluate?: Evaluate,
  budget: TemplateBudget = createTemplateBudget(maxResolvedLength),
): boolean {
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

/** Every `{{= }}` code in a parsed rule's fields and values, for evaluating them ahead (JSONata is asynchronous). */
export function ruleExpressions(rule: RuleNode, out: string[] = []): string[] {
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
