import { booleanField } from './boolean.js'
import { dateField } from './date.js'
import { datetimeField } from './datetime.js'
import { decimalField } from './decimal.js'
import type { FieldType } from './define-field-type.js'
import { emailField } from './email.js'
import { enumField } from './enum.js'
import type { StoredTypeName, ValueKind } from './field-def.js'
import { fileField } from './file.js'
import { geoField } from './geo.js'
import { integerField } from './integer.js'
import { jsonField } from './json.js'
import { lookupField } from './lookup.js'
import { multiEnumField } from './multi-enum.js'
import { numberField } from './number.js'
import { phoneField } from './phone.js'
import { relationField } from './relation.js'
import { richtextField } from './richtext.js'
import { rollupField } from './rollup.js'
import { slugField } from './slug.js'
import { textField } from './text.js'
import { urlField } from './url.js'
import { uuidField } from './uuid.js'

/**
 * Every field type, in the order of addendum §4. Adding one is its file and a line here: the names
 * (`FieldTypeName`) and the value kinds lookups and rollups read with (`plainValueKind`) come from this list.
 */
export const fieldTypes = [
  textField,
  richtextField,
  emailField,
  urlField,
  phoneField,
  slugField,
  uuidField,
  integerField,
  decimalField,
  numberField,
  booleanField,
  dateField,
  datetimeField,
  enumField,
  multiEnumField,
  jsonField,
  relationField,
  fileField,
  geoField,
  lookupField,
  rollupField,
] as const satisfies readonly FieldType<string>[]

/** The field types by canonical name. */
export type FieldTypeName = (typeof fieldTypes)[number]['type']

const byName = new Map<string, FieldType>()
for (const type of fieldTypes as readonly FieldType[]) {
  for (const name of [type.type, ...type.aliases]) byName.set(name, type)
}

/** The field type a name (canonical or alias, e.g. `jsonb`) stands for, or undefined for an unknown name. */
export function findFieldType(name: string): FieldType | undefined {
  return byName.get(name)
}

/** The registry entry of a canonical type name (always present: a test checks the registry against the union). */
export function fieldTypeOf(type: FieldTypeName): FieldType {
  return byName.get(type)!
}

/** The filter kind of a plain value of a stored type (not translatable, a belongsTo relation): what lookups and rollups read. */
export function plainValueKind(type: StoredTypeName): ValueKind {
  return fieldTypeOf(type).valueKind({ name: '', type, required: false, unique: false, indexed: false })
}
