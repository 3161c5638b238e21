import { decodeNumber } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { checkRange, numberRules, withoutNegativeZero } from './number-rules.js'

/** Stored as NUMERIC/numeric; exchanged as a JSON number (PostgreSQL hands numeric back as a string). */
export const decimalField = defineFieldType({
  type: 'decimal',
  label: 'Decimal',
  rules: numberRules,
  column: (_def, dialect) => (dialect === 'sqlite' ? 'NUMERIC' : 'numeric'),
  valueKind: () => 'number',
  write(value, def) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidValue(def.name, 'a finite number', value)
    checkRange(value, def)
    return withoutNegativeZero(value)
  },
  read: (value) => decodeNumber(value),
})
