import type { FieldDef } from './field-def.js'
import type { RuleName } from './define-field-type.js'
import { ruleFailed } from './field-value-error.js'

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
