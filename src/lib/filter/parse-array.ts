import {
  andNode,
  compareBetween,
  compareList,
  comparePresence,
  compareValue,
  type CompareNode,
  type FilterNode,
  type ValueOp,
} from './ast.js'
import { parseFieldPath } from './field-path.js'
import { childPath, filterError, quote } from './filter-error.js'
import { filterLimits } from './limits.js'
import { parseOperand, parseOperandList } from './operand.js'
import { countCondition, type ParseState } from './parse-state.js'
import { isPlainObject, ownEntries } from './plain-object.js'

// The array format's closed set of ops (core-api.md § Filtering). A Map so that "constructor" misses.
const arrayValueOps: ReadonlyMap<string, ValueOp> = new Map<string, ValueOp>([
  ['eq', 'eq'],
  ['neq', 'neq'],
  ['gt', 'gt'],
  ['gte', 'gte'],
  ['lt', 'lt'],
  ['lte', 'lte'],
  ['contains', 'contains'],
  ['starts_with', 'starts_with'],
  ['ends_with', 'ends_with'],
])
const allowedKeys: ReadonlySet<string> = new Set(['field', 'op', 'value', 'valueTo'])

/** Parses a non-empty filter of the array format (UserFilter), its elements ANDed; throws invalid_request. */
export function parseArrayFilter(raw: readonly unknown[], at: string, state: ParseState): FilterNode {
  if (raw.length > filterLimits.maxConditions) {
    throw filterError(at, `filter has more than ${filterLimits.maxConditions} conditions`)
  }
  const nodes = Array.from(raw, (item: unknown, index) => {
    const here = childPath(at, index)
    countCondition(state, here)
    return parseCondition(item, here)
  })
  const [only] = nodes
  return nodes.length === 1 && only !== undefined ? only : andNode(nodes)
}

function parseCondition(raw: unknown, at: string): CompareNode {
  if (!isPlainObject(raw)) throw filterError(at, 'expected an object with field, op and value')
  for (const [key] of ownEntries(raw, at)) {
    if (!allowedKeys.has(key)) throw filterError(childPath(at, key), 'unknown key')
  }
  const has = (key: string): boolean => Object.hasOwn(raw, key)
  const fieldAt = childPath(at, 'field')
  if (!has('field')) throw filterError(fieldAt, 'missing field')
  const field = parseFieldPath(raw.field, fieldAt)
  const op = raw.op
  const opAt = childPath(at, 'op')
  if (!has('op')) throw filterError(opAt, 'missing op')
  if (typeof op !== 'string') throw filterError(opAt, 'op must be a string')
  if (has('valueTo') && op !== 'between') throw filterError(childPath(at, 'valueTo'), `valueTo belongs to between only`)

  const valueOp = arrayValueOps.get(op)
  if (valueOp !== undefined) return compareValue(field, valueOp, requiredOperand(raw, 'value', at))
  switch (op) {
    case 'between':
      return compareBetween(field, requiredOperand(raw, 'value', at), requiredOperand(raw, 'valueTo', at))
    case 'in': {
      const values = parseInValues(raw.value, has('value'), childPath(at, 'value'))
      return compareList(field, 'in', values, typeof raw.value === 'string')
    }
    case 'empty':
    case 'not_empty':
      // A form often sends a blank value along with these; anything more is a mistake worth reporting.
      if (has('value') && raw.value !== null && raw.value !== '') {
        throw filterError(childPath(at, 'value'), `${op} takes no value`)
      }
      return comparePresence(field, op)
  }
  throw filterError(opAt, `unknown op ${quote(op)}`)
}

function requiredOperand(raw: Record<string, unknown>, key: 'value' | 'valueTo', at: string) {
  const here = childPath(at, key)
  if (!Object.hasOwn(raw, key)) throw filterError(here, 'missing value')
  return parseOperand(raw[key], here)
}

// `in` takes a comma-separated string (the spec's form, each item trimmed, so always strings until the schema
// check converts them to the field's kind) or an array.
function parseInValues(raw: unknown, present: boolean, at: string) {
  if (!present) throw filterError(at, 'missing value')
  if (Array.isArray(raw)) return parseOperandList(raw, at)
  if (typeof raw !== 'string') throw filterError(at, 'in takes a comma-separated string or an array of values')
  if (raw.length > filterLimits.maxStringLength) {
    throw filterError(at, `string value longer than ${filterLimits.maxStringLength} characters`)
  }
  if (raw.trim() === '') throw filterError(at, 'list must hold at least one value')
  return parseOperandList(
    raw.split(',').map((item) => item.trim()),
    at,
  )
}
