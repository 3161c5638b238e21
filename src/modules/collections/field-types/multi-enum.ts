import { decodeJson } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { checkEnumValues, describeChoices } from './enum-values.js'
import { invalidValue } from './field-value-error.js'
import { jsonColumn } from './text-like.js'

/** A list of distinct values of `enumValues`, kept in the order given; stored as JSON. */
export const multiEnumField = defineFieldType({
  type: 'multi_enum',
  label: 'Multiple choice',
  options: ['enumValues'],
  column: (_def, dialect) => jsonColumn(dialect),
  valueKind: () => 'json',
  write(value, def) {
    if (!Array.isArray(value)) throw invalidValue(def.name, `a list of values, each ${describeChoices(def)}`, value)
    const allowed = new Set(def.enumValues ?? [])
    const seen = new Set<string>()
    for (const item of value as unknown[]) {
      if (typeof item !== 'string' || !allowed.has(item))
        throw invalidValue(def.name, `a list of values, each ${describeChoices(def)}`, item)
      if (seen.has(item)) throw invalidValue(def.name, 'a list without repeated values', item)
      seen.add(item)
    }
    return [...seen]
  },
  read: (value, _def, dialect) => decodeJson(value, dialect),
  checkDefinition: (def) => checkEnumValues(def),
})
