import { defineFieldType } from './define-field-type.js'
import { checkEnumValues, describeChoices } from './enum-values.js'
import { invalidValue } from './field-value-error.js'
import { textColumn } from './text-like.js'

/** One value of `enumValues`. */
export const enumField = defineFieldType({
  type: 'enum',
  label: 'Choice',
  options: ['enumValues'],
  column: (_def, dialect) => textColumn(dialect),
  valueKind: () => 'text',
  write(value, def) {
    if (typeof value !== 'string' || !(def.enumValues ?? []).includes(value))
      throw invalidValue(def.name, describeChoices(def), value)
    return value
  },
  read: (value) => value,
  checkDefinition: (def) => checkEnumValues(def),
})
