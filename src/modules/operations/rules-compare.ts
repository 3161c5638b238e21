import { isDeepStrictEqual } from 'node:util'
import { isRecord } from './config-paths.js'
import type { RuleNode } from './rules-parse.js'
import { boundedTest, checkPattern } from './safe-regex.js'

// How a rule's operators compare a field with a value, once both are resolved (see rules.ts).

/** Whether `field` and `value` meet the comparison's operator. Throws an Error when they cannot be compared. */
export function compare(rule: Extract<RuleNode, { kind: 'compare' }>, field: unknown, value: unknown): boolean {
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
  if (typeof a === 'boolean' || typeof b === 'boolean')
    return (typeof a === 'string' || typeof b === 'string') && String(a) === String(b)
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
