import { decodeBoolean } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'

/** true or false only (not 0/1 or "true"); SQLite keeps it as INTEGER 0/1, which `read` turns back. */
export const booleanField = defineFieldType({
  type: 'boolean',
  label: 'Boolean',
  column: (_def, dialect) => (dialect === 'sqlite' ? 'INTEGER' : 'boolean'),
  valueKind: () => 'boolean',
  write(value, def) {
    if (typeof value !== 'boolean') throw invalidValue(def.name, 'true or false', value)
    return value
  },
  read: (value) => decodeBoolean(value),
})
