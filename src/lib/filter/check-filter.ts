import { AppError } from '../errors.js'
import {
  andNode,
  compareList,
  literal,
  orNode,
  type CompareNode,
  type CompareOp,
  type FilterNode,
  type Operand,
  type ResolvedFilterNode,
} from './ast.js'
import type { FieldResolver } from './field-resolver.js'
import { fieldValues, isCalendarDate, type FieldValues } from './field-values.js'
import { filterError, quote } from './filter-error.js'
import { variableValues } from './variables.js'

/** How an operator uses its value: compared for equality, ordered against, or searched as text. */
type Use = 'equal' | 'order' | 'text'

const uses: Readonly<
  Record<Exclude<CompareOp, 'in' | 'nin' | 'between' | 'is_null' | 'not_null' | 'empty' | 'not_empty'>, Use>
> = {
  eq: 'equal',
  neq: 'equal',
  gt: 'order',
  gte: 'order',
  lt: 'order',
  lte: 'order',
  contains: 'text',
  ncontains: 'text',
  starts_with: 'text',
  nstarts_with: 'text',
  ends_with: 'text',
  nends_with: 'text',
}

/**
 * The schema check, between parsing and use (SQL or memory): resolves every field through the resolver,
 * which refuses a field a filter may not name (unknown, a path into a non-JSON field, outside an allowlist),
 * and holds every value to the field's values (`fieldValues`):
 * - a value of another kind is refused (no "1" for a number, no 5 for a date); null is always accepted
 *   (it matches nothing but `_null`), and a variable counts as the kind it stands for ($NOW a number);
 * - a date takes YYYY-MM-DD; an enum's eq, neq, in and nin take one of its choices;
 * - a text operator (contains, starts_with, ends_with and their negations) takes a text field;
 * - a JSON field, or a path into one, takes anything;
 * - the items of a comma-separated `in` list are converted to the field's kind (a number, true or false;
 *   text stays text), and an item that does not convert is refused.
 * Returns the checked tree, the same object where nothing changed, with its variables still in place if it
 * had any. Throws invalid_request naming the field, or whatever the resolver throws; internal for a malformed tree.
 */
export function checkFilter(node: ResolvedFilterNode, resolver: FieldResolver): ResolvedFilterNode
export function checkFilter(node: FilterNode, resolver: FieldResolver): FilterNode
export function checkFilter(node: FilterNode, resolver: FieldResolver): FilterNode {
  switch (node?.kind) {
    case 'and':
    case 'or': {
      const items = node.items.map((item) => checkFilter(item, resolver))
      if (items.every((item, i) => item === node.items[i])) return node
      return node.kind === 'and' ? andNode(items) : orNode(items)
    }
    case 'compare':
      return checkCompare(node, resolver)
  }
  throw new AppError('internal', 'checkFilter: malformed filter node')
}

function checkCompare(node: CompareNode, resolver: FieldResolver): CompareNode {
  const values = fieldValues(resolver.resolve(node.field))
  const at = `filter.${node.field.join('.')}`
  switch (node.op) {
    case 'is_null':
    case 'not_null':
    case 'empty':
    case 'not_empty':
      return node
    case 'in':
    case 'nin': {
      const list = node.split === true ? node.values.map((operand) => convert(operand, values, at)) : node.values
      for (const operand of list) checkValue(operand, values, 'equal', node.op, at)
      return node.split === true ? compareList(node.field, node.op, list) : node
    }
    case 'between':
      checkValue(node.from, values, 'order', node.op, at)
      checkValue(node.to, values, 'order', node.op, at)
      return node
  }
  const use = uses[node.op]
  if (use === undefined) throw new AppError('internal', 'checkFilter: unknown operator')
  checkValue(node.value, values, use, node.op, at)
  return node
}

function checkValue(operand: Operand, values: FieldValues, use: Use, op: string, at: string): void {
  if (values.kind === 'any') return
  if (use === 'text' && values.kind !== 'string')
    throw filterError(at, `${op} compares text, and this is ${kindName(values)} field`)
  const given = operandValues(operand)
  if (given === null) return
  if (given.kind !== values.kind) throw filterError(at, `${op} takes ${wanted(values)} here, not ${shown(operand)}`)
  if (use === 'text' || values.kind !== 'string') return
  if (values.format === 'date') {
    const isDate =
      operand.kind === 'literal'
        ? isCalendarDate(String(operand.value))
        : given.kind === 'string' && given.format === 'date'
    if (!isDate) throw filterError(at, `${op} takes a date as YYYY-MM-DD here, not ${shown(operand)}`)
  }
  // A variable's value is not known before the request; only a literal can be held to the choices.
  if (
    use === 'equal' &&
    values.choices &&
    operand.kind === 'literal' &&
    !values.choices.includes(String(operand.value))
  ) {
    throw filterError(at, `${shown(operand)} is not one of the field's choices`)
  }
}

/** The values an operand stands for; null for a null literal, which any field accepts. */
function operandValues(operand: Operand): FieldValues | null {
  if (operand?.kind === 'variable') {
    const values = variableValues[operand.name]
    if (values === undefined) throw new AppError('internal', 'checkFilter: unknown variable')
    return values
  }
  if (operand?.kind !== 'literal') throw new AppError('internal', 'checkFilter: malformed operand')
  const value: unknown = operand.value
  switch (typeof value) {
    case 'string':
      return { kind: 'string' }
    case 'number':
      return { kind: 'number' }
    case 'boolean':
      return { kind: 'boolean' }
    case 'object':
      if (value === null) return null
  }
  throw new AppError('internal', 'checkFilter: malformed literal')
}

// A JSON number's text: no hex, no Infinity, no blank (which Number() would read as 0).
const decimal = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/** One item of a comma-separated list, as the field's kind. Throws invalid_request when it does not convert. */
function convert(operand: Operand, values: FieldValues, at: string): Operand {
  if (operand.kind !== 'literal' || typeof operand.value !== 'string') return operand
  const text = operand.value
  switch (values.kind) {
    case 'number': {
      const number = decimal.test(text) ? Number(text) : Number.NaN
      const fits = values.integer === true ? Number.isSafeInteger(number) : Number.isFinite(number)
      if (!fits)
        throw filterError(
          at,
          `in takes ${values.integer === true ? 'whole numbers' : 'numbers'} here, and ${quote(text)} is not one`,
        )
      return literal(number)
    }
    case 'boolean':
      if (text === 'true' || text === 'false') return literal(text === 'true')
      throw filterError(at, `in takes true or false here, and ${quote(text)} is neither`)
    default:
      return operand
  }
}

function kindName(values: FieldValues): string {
  switch (values.kind) {
    case 'number':
      return 'a number'
    case 'boolean':
      return 'a boolean'
    default:
      return 'a text'
  }
}

function wanted(values: FieldValues): string {
  switch (values.kind) {
    case 'number':
      return 'a number'
    case 'boolean':
      return 'true or false'
    case 'string':
      return values.format === 'date' ? 'a date as YYYY-MM-DD' : 'text'
    default:
      return 'any value'
  }
}

function shown(operand: Operand): string {
  if (operand.kind === 'variable') return operand.name
  const value = operand.value
  return typeof value === 'string' ? quote(value) : String(value)
}
