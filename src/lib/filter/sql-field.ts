import { sql, type RawBuilder, type SqlBool } from 'kysely'
import { AppError } from '../errors.js'
import { checkJsonPath, isColumnKind, type ColumnKind, type ResolvedField } from './field-resolver.js'
import type { Bool, JsonSlot, SqlDialect, ValueKind } from './sql-dialect.js'

/**
 * A condition under construction: SQL, or a truth value known without looking at a row, which `and`
 * and `or` fold away. Conditions are NULL (never a wrong TRUE) where the evaluator says false.
 */
export type Cond = Bool | boolean

/** A field seen by the compiler: a plain column of one kind, or one value inside a JSON column. */
export interface SqlField {
  /** The kind a plain column always holds when not null; null for JSON, whose kind varies per row. */
  readonly fixedKind: ValueKind | null
  isNull(): Cond
  notNull(): Cond
  /** TRUE when the field holds a non-null value of this kind. */
  holds(kind: ValueKind): Cond
  /** TRUE when the field holds a string, a number or a boolean. */
  holdsScalar(): Cond
  holdsArray(): Cond
  /** The value, comparable with `param`; NULL or meaningless where the field does not hold `kind`. */
  value(kind: ValueKind): RawBuilder<unknown>
  param(kind: ValueKind, value: string | number | boolean): RawBuilder<unknown>
  /** Membership in a JSON array; meaningful only where `holdsArray`. */
  arrayHas(kind: ValueKind, value: string | number | boolean): Cond
}

const valueKinds: Readonly<Record<ColumnKind, ValueKind | null>> = {
  text: 'string',
  integer: 'number',
  number: 'number',
  boolean: 'boolean',
  json: null,
}

/** The field a resolver answered, checked once more because resolvers are written by callers; throws internal or invalid_request. */
export function sqlField(resolved: ResolvedField, dialect: SqlDialect): SqlField {
  const { column, jsonPath, type } = resolved
  if (typeof column !== 'string' || column === '' || !isColumnKind(type) || !Array.isArray(jsonPath)) {
    throw new AppError('internal', 'compileFilter: the field resolver returned a malformed field')
  }
  if (type !== 'json' && jsonPath.length > 0) {
    throw new AppError('internal', 'compileFilter: the field resolver returned a JSON path into a non-JSON column')
  }
  checkJsonPath(jsonPath)
  const ref = resolved.unindexed ? dialect.unindexed(sql.ref(column)) : sql.ref(column)
  const kind = valueKinds[type]
  return kind === null ? jsonField(dialect.json(ref, jsonPath)) : plainField(ref, kind, dialect)
}

function plainField(ref: RawBuilder<unknown>, kind: ValueKind, dialect: SqlDialect): SqlField {
  const notNull = sql<SqlBool>`${ref} is not null`
  return {
    fixedKind: kind,
    isNull: () => sql<SqlBool>`${ref} is null`,
    notNull: () => notNull,
    holds: (wanted) => wanted === kind && notNull,
    holdsScalar: () => notNull,
    holdsArray: () => false,
    value: () => ref,
    param: (wanted, value) => dialect.param(wanted, value),
    arrayHas: () => false,
  }
}

const scalarKinds = ['string', 'number', 'boolean'] as const

function jsonField(slot: JsonSlot): SqlField {
  return {
    fixedKind: null,
    isNull: () => slot.isNull(),
    notNull: () => slot.notNull(),
    holds: (kind) => slot.isKind([kind]),
    holdsScalar: () => slot.isKind(scalarKinds),
    holdsArray: () => slot.isKind(['array']),
    value: (kind) => slot.value(kind),
    param: (kind, value) => slot.param(kind, value),
    arrayHas: (kind, value) => slot.arrayHas(kind, value),
  }
}
