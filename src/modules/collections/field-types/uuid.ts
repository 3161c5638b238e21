import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { textColumn } from './text-like.js'

const hyphenated = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const compact = /^[0-9a-f]{32}$/i

/** Any UUID, with or without hyphens, stored in the canonical form (lower case, hyphenated) so equality filters work. */
export const uuidField = defineFieldType({
  type: 'uuid',
  label: 'UUID',
  column: (_def, dialect) => textColumn(dialect),
  valueKind: () => 'text',
  write(value, def) {
    if (typeof value !== 'string' || !(hyphenated.test(value) || compact.test(value)))
      throw invalidValue(def.name, 'a UUID', value)
    const hex = value.replaceAll('-', '').toLowerCase()
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  },
  read: (value) => value,
})
