import { sql, type Expression, type SqlBool } from 'kysely'
import type { DbKind } from '../db/index.js'
import { AppError } from '../errors.js'
import type { CompareNode, LiteralOperand, ResolvedFilterNode, Scalar } from './ast.js'
import type { FieldResolver } from './field-resolver.js'
import { filterError } from './filter-error.js'
import { sqlDialect, type Bool, type SqlDialect, type ValueKind } from './sql-dialect.js'
import { sqlField, type Cond, type SqlField } from './sql-field.js'

/**
 * Compiles a resolved filter into a boolean expression for `query.where(…)`, with exactly the semantics of
 * `evaluateFilter` (see evaluate.ts): columns only through the resolver and `sql.ref`, every value and
 * JSON path as a bound parameter. The expression may be NULL where the evaluator says false, which WHERE,
 * AND and OR treat alike; do not negate it. Throws invalid_request for a field the resolver refuses or a
 * string that is not well-formed UTF-16 (no database can store one), internal for a malformed tree.
 */
export function compileFilter(node: ResolvedFilterNode, resolver: FieldResolver, dialect: DbKind): Expression<SqlBool> {
  const compiled = compileNode(node, { resolver, dialect: sqlDialect(dialect) })
  if (compiled === true) return sql<SqlBool>`true`
  if (compiled === false) return sql<SqlBool>`false`
  return compiled
}

interface Context {
  readonly resolver: FieldResolver
  readonly dialect: SqlDialect
}

type Literal = Exclude<Scalar, null>
type Substring = 'includes' | 'startsWith' | 'endsWith'

const orderings = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const
type Ordering = keyof typeof orderings

function compileNode(node: ResolvedFilterNode, ctx: Context): Cond {
  switch (node?.kind) {
    case 'and':
      return and(node.items.map((item) => compileNode(item, ctx)))
    case 'or':
      return or(node.items.map((item) => compileNode(item, ctx)))
    case 'compare':
      return compileCompare(node, ctx)
  }
  throw new AppError('internal', 'compileFilter: malformed filter node')
}

function compileCompare(node: CompareNode<LiteralOperand>, ctx: Context): Cond {
  const resolved = ctx.resolver.resolve(node.field)
  const through = resolved.through
  if (through === undefined) return compareField(node, sqlField(resolved, ctx.dialect), ctx)
  // Through a relation, even a test that holds for every value (or a null one) needs the related row: a
  // path through no readable row is false whatever the operator, `_null` included.
  if (through === false || typeof through !== 'function') return false
  const cond = compareField(node, sqlField(resolved, ctx.dialect), ctx)
  return cond === false ? false : sql<SqlBool>`${through(cond === true ? sql<SqlBool>`true` : cond)}`
}

function compareField(node: CompareNode<LiteralOperand>, field: SqlField, ctx: Context): Cond {
  switch (node.op) {
    case 'is_null':
      return field.isNull()
    case 'not_null':
      return field.notNull()
    case 'empty':
      return or([field.isNull(), isBlank(field)])
    case 'not_empty':
      return notBlank(field)
    case 'in':
      return anyOf(field, node.values.map(read), ctx)
    case 'nin': {
      // `x NOT IN (…, NULL)` is never TRUE.
      const values = node.values.map(read)
      return values.includes(null) ? false : unequal(field, anyOf(field, values, ctx))
    }
    case 'between':
      return and([order(field, 'gte', read(node.from), ctx), order(field, 'lte', read(node.to), ctx)])
  }
  const value = read(node.value)
  switch (node.op) {
    case 'eq':
      return anyOf(field, [value], ctx)
    case 'neq':
      return value === null ? false : unequal(field, anyOf(field, [value], ctx))
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return order(field, node.op, value, ctx)
    case 'contains':
      if (value === null) return false
      return or([substring(field, 'includes', value, false, ctx), and([field.holdsArray(), member(field, value, ctx)])])
    case 'ncontains':
      if (value === null) return false
      return or([
        substring(field, 'includes', value, true, ctx),
        and([field.holdsArray(), not(member(field, value, ctx))]),
      ])
    case 'starts_with':
      return substring(field, 'startsWith', value, false, ctx)
    case 'nstarts_with':
      return substring(field, 'startsWith', value, true, ctx)
    case 'ends_with':
      return substring(field, 'endsWith', value, false, ctx)
    case 'nends_with':
      return substring(field, 'endsWith', value, true, ctx)
  }
  throw new AppError('internal', 'compileFilter: unknown operator')
}

/** The field equals one of the values: per kind of value, the field holds that kind and is among them. */
function anyOf(field: SqlField, values: readonly Scalar[], ctx: Context): Cond {
  const byKind = new Map<ValueKind, Literal[]>()
  for (const value of values) {
    if (value === null || unstorable(value, ctx)) continue
    const kind = kindOf(value)
    const list = byKind.get(kind)
    if (list) list.push(value)
    else byKind.set(kind, [value])
  }
  return or(
    [...byKind].map(([kind, list]) => {
      const params = list.map((value) => field.param(kind, value))
      const [only] = params
      const value = field.value(kind)
      return typed(
        field,
        kind,
        params.length === 1 && only
          ? sql<SqlBool>`${value} = ${only}`
          : sql<SqlBool>`${value} in (${sql.join(params)})`,
      )
    }),
  )
}

/** neq and nin: the field holds a scalar and is none of the values (of another type counts as none). */
function unequal(field: SqlField, equal: Cond): Cond {
  if (equal === false) return field.holdsScalar()
  // A plain column's test is NULL exactly when the column is; a JSON one needs the guard before NOT.
  return and([field.fixedKind === null ? field.holdsScalar() : true, not(equal)])
}

function order(field: SqlField, op: Ordering, value: Scalar, ctx: Context): Cond {
  if (value === null) return false
  if (typeof value === 'string' && unstorable(value, ctx)) {
    // No stored string holds U+0000, and every other character orders above it, so against stored text
    // `v` compares like the part before its first NUL: x > v and x >= v become x > cut, x < v and x <= v become x <= cut.
    const cut = value.slice(0, value.indexOf('\u0000'))
    return order(field, op === 'gt' || op === 'gte' ? 'gt' : 'lte', cut, ctx)
  }
  const kind = kindOf(value)
  const left = kind === 'string' ? ctx.dialect.byCodePoint(field.value(kind)) : field.value(kind)
  return typed(field, kind, sql<SqlBool>`${left} ${sql.raw(orderings[op])} ${field.param(kind, value)}`)
}

/** contains, starts_with and ends_with on strings, and their negations: both sides must be strings. */
function substring(field: SqlField, test: Substring, value: Scalar, negate: boolean, ctx: Context): Cond {
  if (typeof value !== 'string') return false
  if (value === '') return negate ? false : field.holds('string')
  if (unstorable(value, ctx)) return negate ? field.holds('string') : false
  return typed(field, 'string', ctx.dialect[test](field.value('string'), value, negate))
}

/** A JSON array holds the value itself; a stored array never holds a string the database cannot store. */
function member(field: SqlField, value: Literal, ctx: Context): Cond {
  return unstorable(value, ctx) ? false : field.arrayHas(kindOf(value), value)
}

function isBlank(field: SqlField): Cond {
  return typed(field, 'string', sql<SqlBool>`${field.value('string')} = ''`)
}

function notBlank(field: SqlField): Cond {
  if (field.fixedKind === null) return and([field.notNull(), not(isBlank(field))])
  return field.fixedKind === 'string' ? sql<SqlBool>`${field.value('string')} <> ''` : field.notNull()
}

/** `test` applied where the field holds a value of `kind`: folded away for a plain column of that kind. */
function typed(field: SqlField, kind: ValueKind, test: Cond): Cond {
  if (field.fixedKind === null) return and([field.holds(kind), test])
  if (field.fixedKind !== kind) return false
  return test === true ? field.holds(kind) : test
}

function unstorable(value: Literal, ctx: Context): boolean {
  return typeof value === 'string' && !ctx.dialect.storesNul && value.includes('\u0000')
}

function kindOf(value: Literal): ValueKind {
  return typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'boolean'
}

// A lone surrogate cannot be encoded in UTF-8: both drivers would bind U+FFFD instead and compare something else.
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function read(operand: LiteralOperand): Scalar {
  if (operand?.kind !== 'literal') throw new AppError('internal', 'compileFilter: resolve variables before compiling')
  const value: unknown = operand.value
  switch (typeof value) {
    case 'string':
      if (loneSurrogate.test(value)) throw filterError('filter', 'string value is not well-formed Unicode')
      return value
    case 'number':
      if (!Number.isFinite(value)) throw filterError('filter', 'number value must be finite')
      return value
    case 'boolean':
      return value
    case 'object':
      if (value === null) return null
  }
  throw new AppError('internal', 'compileFilter: malformed literal')
}

// Conditions built by and/or carry their own parentheses; the set keeps `not` from adding a second pair.
const grouped = new WeakSet<Bool>()

function and(items: readonly Cond[]): Cond {
  return combine(items, false, ' and ')
}

function or(items: readonly Cond[]): Cond {
  return combine(items, true, ' or ')
}

/** Folds truth values: `absorbing` decides the whole, its opposite drops out. */
function combine(items: readonly Cond[], absorbing: boolean, separator: string): Cond {
  const kept: Bool[] = []
  for (const item of items) {
    if (item === absorbing) return absorbing
    if (item !== !absorbing) kept.push(item as Bool)
  }
  const [only] = kept
  if (only === undefined) return !absorbing
  if (kept.length === 1) return only
  const group = sql<SqlBool>`(${sql.join(kept, sql.raw(separator))})`
  grouped.add(group)
  return group
}

function not(cond: Cond): Cond {
  if (typeof cond === 'boolean') return !cond
  return grouped.has(cond) ? sql<SqlBool>`not ${cond}` : sql<SqlBool>`not (${cond})`
}
