import {
  andNode,
  compareList,
  comparePresence,
  compareValue,
  orNode,
  type CompareNode,
  type FieldPath,
  type FilterNode,
  type PresenceOp,
  type ValueOp,
} from './ast.js'
import { parseFieldPath } from './field-path.js'
import { childPath, filterError, quote } from './filter-error.js'
import { filterLimits } from './limits.js'
import { parseOperand, parseOperandList } from './operand.js'
import { countCondition, type ParseState } from './parse-state.js'
import { isPlainObject, ownEntries } from './plain-object.js'

// A Map, not an object literal: a lookup of "constructor" or "toString" must miss.
const valueOperators: ReadonlyMap<string, ValueOp> = new Map<string, ValueOp>([
  ['_eq', 'eq'],
  ['_neq', 'neq'],
  ['_gt', 'gt'],
  ['_gte', 'gte'],
  ['_lt', 'lt'],
  ['_lte', 'lte'],
  ['_contains', 'contains'],
  ['_ncontains', 'ncontains'],
  ['_starts_with', 'starts_with'],
  ['_nstarts_with', 'nstarts_with'],
  ['_ends_with', 'ends_with'],
  ['_nends_with', 'nends_with'],
])
const presenceOperators: ReadonlyMap<string, PresenceOp> = new Map<string, PresenceOp>([
  ['_null', 'is_null'],
  ['_nnull', 'not_null'],
])

/**
 * Parses a non-empty filter object of the object format: field keys and `_and`/`_or`, ANDed;
 * `depth` counts the combinators around it. Throws invalid_request.
 */
export function parseObjectFilter(
  raw: Record<string, unknown>,
  at: string,
  depth: number,
  state: ParseState,
): FilterNode {
  const entries = ownEntries(raw, at)
  if (entries.length === 0) throw filterError(at, 'empty filter object')
  const nodes: FilterNode[] = []
  for (const [key, value] of entries) {
    const here = childPath(at, key)
    if (key === '_and' || key === '_or') nodes.push(parseCombinator(key, value, here, depth + 1, state))
    else nodes.push(...parseField(key, value, here, state))
  }
  const [only] = nodes
  return nodes.length === 1 && only !== undefined ? only : andNode(nodes)
}

function parseCombinator(key: '_and' | '_or', raw: unknown, at: string, depth: number, state: ParseState): FilterNode {
  if (depth > filterLimits.maxDepth) throw filterError(at, `filter nests deeper than ${filterLimits.maxDepth} levels`)
  if (!Array.isArray(raw)) throw filterError(at, `${key} must be an array of filter objects`)
  if (raw.length === 0) throw filterError(at, `${key} must hold at least one filter object`)
  // Each item holds at least one condition, so a longer array can only fail later, after more work.
  if (raw.length > filterLimits.maxConditions) {
    throw filterError(at, `filter has more than ${filterLimits.maxConditions} conditions`)
  }
  const items = Array.from(raw, (item: unknown, index) => {
    const here = childPath(at, index)
    if (!isPlainObject(item)) throw filterError(here, 'expected a filter object')
    return parseObjectFilter(item, here, depth, state)
  })
  return key === '_and' ? andNode(items) : orNode(items)
}

function parseField(key: string, raw: unknown, at: string, state: ParseState): CompareNode[] {
  const field = parseFieldPath(key, at)
  if (!isPlainObject(raw)) {
    countCondition(state, at)
    return [compareValue(field, 'eq', parseOperand(raw, at))]
  }
  const entries = ownEntries(raw, at)
  if (entries.length === 0) throw filterError(at, 'operator object must hold at least one operator')
  return entries.map(([operator, value]) => {
    const here = childPath(at, operator)
    countCondition(state, here)
    return parseOperator(field, operator, value, here, at)
  })
}

function parseOperator(field: FieldPath, operator: string, raw: unknown, at: string, fieldAt: string): CompareNode {
  const valueOp = valueOperators.get(operator)
  if (valueOp !== undefined) return compareValue(field, valueOp, parseOperand(raw, at))
  if (operator === '_in' || operator === '_nin') {
    if (!Array.isArray(raw)) throw filterError(at, `${operator} takes an array of values`)
    return compareList(field, operator === '_in' ? 'in' : 'nin', parseOperandList(raw, at))
  }
  const presenceOp = presenceOperators.get(operator)
  if (presenceOp !== undefined) {
    if (raw !== true) throw filterError(at, `${operator} takes only true`)
    return comparePresence(field, presenceOp)
  }
  throw filterError(fieldAt, `unknown operator ${quote(operator)}`)
}
