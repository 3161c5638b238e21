/**
 * The filter AST: frozen nodes with a `kind`, built only through the constructors below so that every
 * node and every array in a tree is frozen. The parser produces it; the evaluator, the schema check and
 * the SQL compiler consume it.
 *
 * There is no `not` node: every negation is an operator of its own (neq, nin, ncontains…), and without NOT,
 * SQL's UNKNOWN behaves exactly like FALSE under AND and OR, so consumers can stay two-valued.
 */

/** A JSON scalar, the only kind of value a filter compares against. */
export type Scalar = string | number | boolean | null

/** The dynamic variables of the spec, resolved per request by `resolveVariables`. */
export const variableNames = ['$CURRENT_USER', '$CURRENT_ROLE', '$PROJECT_ID', '$NOW', '$NOW_DATE'] as const
export type VariableName = (typeof variableNames)[number]

export interface LiteralOperand {
  readonly kind: 'literal'
  readonly value: Scalar
}
export interface VariableOperand {
  readonly kind: 'variable'
  readonly name: VariableName
}
export type Operand = LiteralOperand | VariableOperand

/** A dotted field name split into checked segments: the column, then keys inside its JSON value. */
export type FieldPath = readonly [string, ...string[]]

/** Operators that compare the field with one value. */
export const valueOps = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'ncontains',
  'starts_with',
  'nstarts_with',
  'ends_with',
  'nends_with',
] as const
/** Operators that compare the field with a list of values. */
export const listOps = ['in', 'nin'] as const
/** Operators that take no value. `empty` means NULL or the empty string. */
export const presenceOps = ['is_null', 'not_null', 'empty', 'not_empty'] as const

export type ValueOp = (typeof valueOps)[number]
export type ListOp = (typeof listOps)[number]
export type PresenceOp = (typeof presenceOps)[number]
export type CompareOp = ValueOp | ListOp | 'between' | PresenceOp

export interface ValueCompare<O extends Operand = Operand> {
  readonly kind: 'compare'
  readonly field: FieldPath
  readonly op: ValueOp
  readonly value: O
}
export interface ListCompare<O extends Operand = Operand> {
  readonly kind: 'compare'
  readonly field: FieldPath
  readonly op: ListOp
  /** Never empty, at most `filterLimits.maxListValues`. */
  readonly values: readonly O[]
  /**
   * Present (true) when the values were written as one comma-separated string (the array format's `in`):
   * each literal is still the text written, and the schema check (`checkFilter`) converts it to the
   * field's kind and drops the mark. Consumers of an unchecked tree compare the text as it is.
   */
  readonly split?: true
}
/** Inclusive at both ends. */
export interface BetweenCompare<O extends Operand = Operand> {
  readonly kind: 'compare'
  readonly field: FieldPath
  readonly op: 'between'
  readonly from: O
  readonly to: O
}
export interface PresenceCompare {
  readonly kind: 'compare'
  readonly field: FieldPath
  readonly op: PresenceOp
}
export type CompareNode<O extends Operand = Operand> =
  | ValueCompare<O>
  | ListCompare<O>
  | BetweenCompare<O>
  | PresenceCompare

/** All items must hold; with no items it is TRUE (the empty filter). */
export interface AndNode<O extends Operand = Operand> {
  readonly kind: 'and'
  readonly items: readonly FilterNode<O>[]
}
/** Some item must hold; the parser never produces an empty one, and an empty one (`matchNone`) is FALSE. */
export interface OrNode<O extends Operand = Operand> {
  readonly kind: 'or'
  readonly items: readonly FilterNode<O>[]
}

export type FilterNode<O extends Operand = Operand> = AndNode<O> | OrNode<O> | CompareNode<O>
/** A tree whose variables have been replaced by literals: what the evaluator takes. */
export type ResolvedFilterNode = FilterNode<LiteralOperand>

/** Builds a frozen literal operand; throws nothing. */
export function literal(value: Scalar): LiteralOperand {
  return Object.freeze({ kind: 'literal', value })
}

/** Builds a frozen variable operand; throws nothing. */
export function variable(name: VariableName): VariableOperand {
  return Object.freeze({ kind: 'variable', name })
}

/** Builds a frozen AND node; throws nothing. */
export function andNode<O extends Operand>(items: readonly FilterNode<O>[]): AndNode<O> {
  return Object.freeze({ kind: 'and', items: Object.freeze([...items]) })
}

/** Builds a frozen OR node; throws nothing. */
export function orNode<O extends Operand>(items: readonly FilterNode<O>[]): OrNode<O> {
  return Object.freeze({ kind: 'or', items: Object.freeze([...items]) })
}

/** The filter that matches every record (an empty AND); throws nothing. */
export function matchAll(): AndNode<never> {
  return andNode<never>([])
}

/** The filter that matches no record (an empty OR): what a grant whose filter cannot apply contributes; throws nothing. */
export function matchNone(): OrNode<never> {
  return orNode<never>([])
}

/** Builds a frozen single-value comparison; throws nothing. */
export function compareValue<O extends Operand>(field: FieldPath, op: ValueOp, value: O): ValueCompare<O> {
  return Object.freeze({ kind: 'compare', field: freezePath(field), op, value })
}

/** Builds a frozen list comparison (in, nin), marked `split` when written as a comma-separated string; throws nothing. */
export function compareList<O extends Operand>(
  field: FieldPath,
  op: ListOp,
  values: readonly O[],
  split = false,
): ListCompare<O> {
  const node = { kind: 'compare', field: freezePath(field), op, values: Object.freeze([...values]) } as const
  return Object.freeze(split ? { ...node, split: true } : node)
}

/** Builds a frozen inclusive range comparison; throws nothing. */
export function compareBetween<O extends Operand>(field: FieldPath, from: O, to: O): BetweenCompare<O> {
  return Object.freeze({ kind: 'compare', field: freezePath(field), op: 'between', from, to })
}

/** Builds a frozen comparison that takes no value; throws nothing. */
export function comparePresence(field: FieldPath, op: PresenceOp): PresenceCompare {
  return Object.freeze({ kind: 'compare', field: freezePath(field), op })
}

function freezePath(field: FieldPath): FieldPath {
  return Object.isFrozen(field) ? field : (Object.freeze([...field]) as unknown as FieldPath)
}
