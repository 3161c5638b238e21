import { decodeNumber } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { numberRules, writeFiniteNumber } from './number-rules.js'

/** Stored as NUMERIC/numeric; exchanged as a JSON number (PostgreSQL hands numeric back as a string). */
export const decimalField = defineFieldType({
  type: 'decimal',
  label: 'Decimal',
  rules: numberRules,
  column: (_def, dialect) => (dialect === 'sqlite' ? 'NUMERIC' : 'numeric'),
  valueKind: () => 'number',
  write: writeFiniteNumber,
  read: (value) => decodeNumber(value),
})
