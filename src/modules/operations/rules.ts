import type { ConfigPath } from './config-paths.js'
import { precomputeExpressions } from './expressions.js'
import { evaluateRule, ruleExpressions } from './rules-evaluate.js'
import { parseRule } from './rules-parse.js'
import { StepError } from './types.js'

/**
 * The condition rule tree (automation spec "condition"; a step's `condition` setting): a leaf compares a
 * field with a value, `{ field, operator, value? }`, and groups combine rules, `{ _and: [...] }`,
 * `{ _or: [...] }`. `field` is a template path (`$trigger.body.status`) or a template (`{{= $count($steps.a) }}`);
 * `value` may hold templates. Checked when the flow is saved (parseRule, rules-parse.ts), evaluated at run
 * time (evaluateRule, rules-evaluate.ts; the operators in rules-compare.ts). This file is their entry.
 */

export {
  parseRule,
  ruleOperators,
  templateRoots,
  type FieldSource,
  type ParsedRule,
  type RuleIssue,
  type RuleNode,
  type RuleOperator,
} from './rules-parse.js'
export { evaluateRule } from './rules-evaluate.js'
export { numberOf, same } from './rules-compare.js'

/**
 * Parses and evaluates a rule tree over a run's template context. Throws StepError invalid_condition
 * (a tree that does not parse: one saved before checks existed) or condition_failed (a comparison that
 * cannot be made); neither is retried.
 */
export async function evaluateRuleTree(tree: unknown, data: Readonly<Record<string, unknown>>): Promise<boolean> {
  const parsed = parseRule(tree)
  if (!parsed.ok) {
    const first = parsed.issues[0]!
    throw new StepError(
      'invalid_condition',
      `Invalid rule at ${describePath(first.path)}: ${first.message}`,
      { issues: parsed.issues.map((i) => ({ path: describePath(i.path), message: i.message })) },
      400,
      false,
    )
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
  return (
    path
      .map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`))
      .join('')
      .replace(/^\./, '') || 'the rule'
  )
}
