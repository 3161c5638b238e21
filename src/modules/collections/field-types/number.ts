import { decodeNumber } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { numberRules, writeFiniteNumber } from './number-rules.js'

/** A double-precision float. */
export const numberField = defineFieldType({
  type: 'number',
  label: 'Number',
  rules: numberRules,
  column: (_def, dialect) => (dialect === 'sqlite' ? 'REAL' : 'double precision'),
  valueKind: () => 'number',
  write: writeFiniteNumber,
  read: (value) => decodeNumber(value),
})
