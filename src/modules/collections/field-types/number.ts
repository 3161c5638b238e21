import { decodeNumber } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { checkRange, numberRules, withoutNegativeZero } from './number-rules.js'

/** A double-precision float. */
export const numberField = defineFieldType({
  type: 'number',
  label: 'Number',
  rules: numberRules,
  column: (_def, dialect) => (dialect === 'sqlite' ? 'REAL' : 'double precision'),
  valueKind: () => 'number',
  write(value, def) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidValue(def.name, 'a finite number', value)
    checkRange(value, def)
    return withoutNegativeZero(value)
  },
  read: (value) => decodeNumber(value),
})
