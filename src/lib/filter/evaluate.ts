import type { CompareNode, LiteralOperand, ResolvedFilterNode, Scalar } from './ast.js'

/**
 * Tests one record against a resolved filter in memory, with the semantics the SQL compiler emits;
 * throws nothing. The rules, each what SQL's three-valued logic gives (UNKNOWN → not matched):
 * - a null (or missing) field, or a null operand, matches no comparison except is_null, not_null, empty,
 *   not_empty; so neq, nin, ncontains, nstarts_with and nends_with are false on a null field, and nin is
 *   false whenever its list holds a null (as `x NOT IN (…, NULL)` is);
 * - nothing is coerced: 1 never equals "1" (the schema check, `checkFilter`, refuses a value of another
 *   type than its field's and converts comma-separated lists before a filter runs; inside JSON types still
 *   vary); values of different types are never equal, never ordered, and are unequal for neq and nin;
 * - strings order by code point (SQLite's BINARY, PostgreSQL's COLLATE "C"), not by locale;
 * - contains, starts_with and ends_with are case-sensitive, take the value literally (no LIKE wildcards;
 *   the compiler uses instr/strpos), and hold only between strings, except that contains and ncontains on
 *   a JSON array test membership;
 * - a JSON object or array field takes part only in contains, ncontains and the presence operators;
 * - empty means null or the empty string; between is inclusive at both ends;
 * - a dotted path walks own keys of nested objects; anything else on the way gives null.
 */
export function evaluateFilter(node: ResolvedFilterNode, record: Record<string, unknown>): boolean {
  switch (node.kind) {
    case 'and':
      return node.items.every((item) => evaluateFilter(item, record))
    case 'or':
      return node.items.some((item) => evaluateFilter(item, record))
    case 'compare':
      return evaluateCompare(node, readPath(record, node.field))
  }
}

function evaluateCompare(node: CompareNode<LiteralOperand>, field: unknown): boolean {
  switch (node.op) {
    case 'is_null':
      return field === null
    case 'not_null':
      return field !== null
    case 'empty':
      return field === null || field === ''
    case 'not_empty':
      return field !== null && field !== ''
    case 'in':
      return isScalarValue(field) && node.values.some((v) => same(field, v.value))
    case 'nin':
      return isScalarValue(field) && node.values.every((v) => v.value !== null && !same(field, v.value))
    case 'between':
      return order(field, node.from.value) >= 0 && order(field, node.to.value) <= 0
  }
  const value = node.value.value
  switch (node.op) {
    case 'eq':
      return same(field, value)
    case 'neq':
      return isScalarValue(field) && value !== null && !same(field, value)
    case 'gt':
      return order(field, value) > 0
    case 'gte':
      return order(field, value) >= 0
    case 'lt':
      return order(field, value) < 0
    case 'lte':
      return order(field, value) <= 0
    case 'contains':
      return contains(field, value) === true
    case 'ncontains':
      return contains(field, value) === false
    case 'starts_with':
      return typeof field === 'string' && typeof value === 'string' && field.startsWith(value)
    case 'nstarts_with':
      return typeof field === 'string' && typeof value === 'string' && !field.startsWith(value)
    case 'ends_with':
      return typeof field === 'string' && typeof value === 'string' && field.endsWith(value)
    case 'nends_with':
      return typeof field === 'string' && typeof value === 'string' && !field.endsWith(value)
  }
}

/** A non-null string, number or boolean: what eq, neq, in, nin and the orderings compare. */
function isScalarValue(value: unknown): value is Exclude<Scalar, null> {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

function same(field: unknown, value: Scalar): boolean {
  return isScalarValue(field) && field === value
}

/** Sign of field − value, or NaN when they cannot be ordered (null, different types, containers). */
function order(field: unknown, value: Scalar): number {
  if (typeof field === 'number' && typeof value === 'number') return Math.sign(field - value)
  if (typeof field === 'string' && typeof value === 'string') return compareCodePoints(field, value)
  if (typeof field === 'boolean' && typeof value === 'boolean') return Number(field) - Number(value)
  return Number.NaN
}

/** True or false when the test applies, null when it is UNKNOWN (null on either side, wrong types). */
function contains(field: unknown, value: Scalar): boolean | null {
  if (value === null) return null
  if (typeof field === 'string') return typeof value === 'string' ? field.includes(value) : null
  if (Array.isArray(field)) return field.some((item: unknown) => item === value)
  return null
}

// UTF-16 code units order like code points except that surrogates (D800–DFFF) must sort above E000–FFFF.
function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i += 1) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return Math.sign(codePointRank(x) - codePointRank(y))
  }
  return Math.sign(a.length - b.length)
}

function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800
  if (unit >= 0xd800) return unit + 0x2000
  return unit
}

function readPath(record: Record<string, unknown>, path: readonly string[]): unknown {
  let current: unknown = record
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return null
    if (!Object.hasOwn(current, segment)) return null
    current = (current as Record<string, unknown>)[segment]
  }
  return current === undefined ? null : current
}
