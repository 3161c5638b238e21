import {
  andNode,
  compareBetween,
  compareList,
  compareValue,
  literal,
  orNode,
  type FilterNode,
  type LiteralOperand,
  type Operand,
  type ResolvedFilterNode,
  type Scalar,
  type VariableName,
} from './ast.js'
import { AppError } from '../errors.js'
import type { FieldValues } from './field-values.js'

// The largest instant a JavaScript Date can hold, in seconds; past it $NOW_DATE has no value.
const maxDateSeconds = 8.64e12

/** Who is asking, and when: the values of the dynamic variables for one request. */
export interface VariableContext {
  /** Null for an anonymous caller: $CURRENT_USER becomes null, which no comparison matches. */
  readonly userId: string | null
  readonly role: string
  readonly projectId: string
  /** Unix seconds, e.g. `clock.seconds()`. */
  readonly now: number
}

/**
 * What each variable stands for, as the schema check sees it before a request resolves it: $NOW is Unix
 * seconds, $NOW_DATE a date, the others text ($CURRENT_USER is null for an anonymous caller).
 */
export const variableValues: Readonly<Record<VariableName, FieldValues>> = Object.freeze({
  $CURRENT_USER: { kind: 'string' },
  $CURRENT_ROLE: { kind: 'string' },
  $PROJECT_ID: { kind: 'string' },
  $NOW: { kind: 'number', integer: true },
  $NOW_DATE: { kind: 'string', format: 'date' },
})

/** Replaces every variable with its value for this request, giving a new frozen AST; throws internal on a bad clock. */
export function resolveVariables(node: FilterNode, context: VariableContext): ResolvedFilterNode {
  if (!Number.isFinite(context.now) || Math.abs(context.now) > maxDateSeconds) {
    throw new AppError('internal', 'resolveVariables: now must be Unix seconds within the range of a Date')
  }
  return resolveNode(node, context)
}

/** The value one variable takes in a context; throws nothing. */
export function variableValue(name: VariableName, context: VariableContext): Scalar {
  switch (name) {
    case '$CURRENT_USER':
      return context.userId
    case '$CURRENT_ROLE':
      return context.role
    case '$PROJECT_ID':
      return context.projectId
    case '$NOW':
      return Math.floor(context.now)
    case '$NOW_DATE':
      return new Date(Math.floor(context.now) * 1000).toISOString().slice(0, 10)
  }
}

function resolveNode(node: FilterNode, context: VariableContext): ResolvedFilterNode {
  const operand = (o: Operand): LiteralOperand => (o.kind === 'literal' ? o : literal(variableValue(o.name, context)))
  switch (node.kind) {
    case 'and':
      return andNode(node.items.map((item) => resolveNode(item, context)))
    case 'or':
      return orNode(node.items.map((item) => resolveNode(item, context)))
  }
  switch (node.op) {
    case 'in':
    case 'nin':
      return compareList(node.field, node.op, node.values.map(operand), node.split === true)
    case 'between':
      return compareBetween(node.field, operand(node.from), operand(node.to))
    case 'is_null':
    case 'not_null':
    case 'empty':
    case 'not_empty':
      return node
    default:
      return compareValue(node.field, node.op, operand(node.value))
  }
}
