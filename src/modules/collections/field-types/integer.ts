import { decodeNumber } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { checkRange, numberRules, withoutNegativeZero } from './number-rules.js'

/** A whole number within ±(2^53 - 1), the range a JSON number carries exactly. */
export const integerField = defineFieldType({
  type: 'integer',
  label: 'Integer',
  rules: numberRules,
  column: (_def, dialect) => (dialect === 'sqlite' ? 'INTEGER' : 'bigint'),
  valueKind: () => 'integer',
  write(value, def) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value))
      throw invalidValue(def.name, 'a whole number within ±9007199254740991', value)
    checkRange(value, def)
    return withoutNegativeZero(value)
  },
  read: (value) => decodeNumber(value),
})
