import type { FieldDef } from './field-def.js'
import type { RuleName } from './define-field-type.js'
import { invalidValue, ruleFailed } from './field-value-error.js'

export const numberRules: readonly RuleName[] = ['min', 'max']

/** `validationRules.min` and `max`, inclusive; throws validation_error. */
export function checkRange(value: number, def: FieldDef): void {
  const rules = def.validationRules
  if (rules?.min !== undefined && value < rules.min) throw ruleFailed(def.name, 'min', `must be at least ${rules.min}`)
  if (rules?.max !== undefined && value > rules.max) throw ruleFailed(def.name, 'max', `must be at most ${rules.max}`)
}

/** -0 would survive JSON and surprise equality filters; store 0. */
export function withoutNegativeZero(value: number): number {
  return Object.is(value, -0) ? 0 : value
}

/** A finite JSON number within the field's min/max; what number and decimal both store. Throws FieldValueError. */
export function writeFiniteNumber(value: unknown, def: FieldDef): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidValue(def.name, 'a finite number', value)
  checkRange(value, def)
  return withoutNegativeZero(value)
}
