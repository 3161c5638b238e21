import { AppError } from '../errors.js'
import type { ColumnKind, ResolvedField } from './field-resolver.js'

/**
 * The values a filter may compare a field with, which the schema check (`checkFilter`) holds every
 * value to: text (a date's shape or an enum's choices narrowing it), a number (whole for an integer
 * column), true or false, or anything (`any`: JSON, whose values have no declared type).
 */
export type FieldValues =
  | { readonly kind: 'string'; readonly format?: 'date'; readonly choices?: readonly string[] }
  | { readonly kind: 'number'; readonly integer?: boolean }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'any' }

const byColumn: Readonly<Record<ColumnKind, FieldValues>> = Object.freeze({
  text: Object.freeze({ kind: 'string' }),
  integer: Object.freeze({ kind: 'number', integer: true }),
  number: Object.freeze({ kind: 'number' }),
  boolean: Object.freeze({ kind: 'boolean' }),
  json: Object.freeze({ kind: 'any' }),
})

const valueKinds: ReadonlySet<string> = new Set(['string', 'number', 'boolean', 'any'])

/**
 * The values of a resolved field: what its resolver declared, else what its column kind holds. Throws
 * internal for a malformed declaration (resolvers are written by callers).
 */
export function fieldValues(field: ResolvedField): FieldValues {
  const declared: unknown = field.values
  if (declared === undefined) {
    const values = byColumn[field.type]
    if (values === undefined)
      throw new AppError('internal', 'checkFilter: the field resolver returned an unknown column kind')
    return values
  }
  if (
    typeof declared !== 'object' ||
    declared === null ||
    !valueKinds.has(String((declared as { kind?: unknown }).kind))
  ) {
    throw new AppError('internal', 'checkFilter: the field resolver declared malformed values')
  }
  return declared as FieldValues
}

const dateShape = /^(\d{4})-(\d{2})-(\d{2})$/

/** A calendar date as YYYY-MM-DD (proleptic Gregorian), the form date fields store; throws nothing. */
export function isCalendarDate(text: string): boolean {
  const match = dateShape.exec(text)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}
