import { decodeJson } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { jsonProblem } from './json-value.js'
import { jsonColumn } from './text-like.js'

/** Any JSON value; `jsonb` is accepted as an alias. `structure` (addendum §4) is kept, not yet enforced. */
export const jsonField = defineFieldType({
  type: 'json',
  label: 'JSON',
  aliases: ['jsonb'],
  options: ['structure'],
  column: (_def, dialect) => jsonColumn(dialect),
  valueKind: () => 'json',
  write(value, def) {
    const problem = jsonProblem(value)
    if (problem) throw invalidValue(def.name, `plain JSON (${problem})`, value)
    return value
  },
  read: (value, _def, dialect) => decodeJson(value, dialect),
})
