import { isCalendarDate } from '../../../lib/filter/index.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { textColumn } from './text-like.js'

export const dateField = defineFieldType({
  type: 'date',
  label: 'Date',
  column: (_def, dialect) => textColumn(dialect),
  valueKind: () => 'text',
  write(value, def) {
    if (typeof value !== 'string' || !isCalendarDate(value))
      throw invalidValue(def.name, 'a calendar date as YYYY-MM-DD', value)
    return value
  },
  read: (value) => value,
})
