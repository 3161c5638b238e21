export {
  andNode,
  compareBetween,
  compareList,
  comparePresence,
  compareValue,
  literal,
  matchAll,
  matchNone,
  orNode,
  variable,
  listOps,
  presenceOps,
  valueOps,
  variableNames,
  type AndNode,
  type BetweenCompare,
  type CompareNode,
  type CompareOp,
  type FieldPath,
  type FilterNode,
  type ListCompare,
  type ListOp,
  type LiteralOperand,
  type Operand,
  type OrNode,
  type PresenceCompare,
  type PresenceOp,
  type ResolvedFilterNode,
  type Scalar,
  type ValueCompare,
  type ValueOp,
  type VariableName,
  type VariableOperand,
} from './ast.js'
export { checkFilterBounds } from './bounds.js'
export { checkFilter } from './check-filter.js'
export { compileFilter } from './compile-filter.js'
export { keysetAfter, keysetOrder, sortExpression, sortParam, type KeysetDirection } from './order-by.js'
export { evaluateFilter } from './evaluate.js'
export {
  checkJsonPath,
  columnKinds,
  createSchemaResolver,
  type ColumnKind,
  type ColumnSpec,
  type FieldResolver,
  type ResolvedField,
} from './field-resolver.js'
export { fieldValues, isCalendarDate, type FieldValues } from './field-values.js'
export { filterLimits } from './limits.js'
export { parseFilter } from './parse.js'
export { resolveVariables, variableValue, variableValues, type VariableContext } from './variables.js'
