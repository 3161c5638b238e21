import { idPattern } from '../../../lib/ids.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { textColumn } from './text-like.js'

/** The id of a file of the project (32 lower-case hex); whether it exists is the records service's check. */
export const fileField = defineFieldType({
  type: 'file',
  label: 'File',
  column: (_def, dialect) => textColumn(dialect),
  valueKind: () => 'text',
  write(value, def) {
    if (typeof value !== 'string' || !idPattern.test(value))
      throw invalidValue(def.name, 'a file id (32 lower-case hex characters)', value)
    return value
  },
  read: (value) => value,
})
