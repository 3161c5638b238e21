import { decodeNumber } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { checkRange, numberRules } from './number-rules.js'

/** A moment as Unix seconds: a whole number ≥ 0. */
export const datetimeField = defineFieldType({
  type: 'datetime',
  label: 'Date and time',
  rules: numberRules,
  column: (_def, dialect) => (dialect === 'sqlite' ? 'INTEGER' : 'bigint'),
  valueKind: () => 'integer',
  write(value, def) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw invalidValue(def.name, 'Unix seconds (a whole number ≥ 0)', value)
    }
    checkRange(value, def)
    return value === 0 ? 0 : value
  },
  read: (value) => decodeNumber(value),
})
