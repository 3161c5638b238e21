import { decodeByKind } from './decode.js'
import { defineFieldType, type FieldType } from './define-field-type.js'
import { fieldsOf, type DefinitionContext, type FieldDef, type StoredTypeName } from './field-def.js'
import { FieldValueError } from './field-value-error.js'
// Read inside functions only: the registry imports this file (the cycle is safe at run time).
import { plainValueKind } from './registry.js'
import { notThroughUsers, usersTarget } from './users-target.js'

/**
 * A field of the record a belongsTo relation points at, read through it. Computed: never written, no
 * column. Its `resultType` is the target field's type. The target must be a stored, single-valued field:
 * not a lookup or rollup, not translatable, not a hasMany relation.
 * Typed by hand: its functions read FieldDef, whose type names come from the registry holding this value.
 */
export const lookupField: FieldType<'lookup'> = defineFieldType({
  type: 'lookup',
  label: 'Lookup',
  computed: true,
  options: ['lookupConfig'],
  column: () => null,
  valueKind: (def) => plainValueKind(def.resultType ?? 'text'),
  write(_value, def) {
    throw new FieldValueError(
      'invalid_field',
      def.name,
      `Field "${def.name}" is a lookup, computed by the server, and cannot be written`,
    )
  },
  read: (value, def, dialect) => decodeByKind(value, plainValueKind(def.resultType ?? 'text'), dialect),
  checkDefinition(def, context) {
    const found = findTarget(def, context)
    return typeof found === 'string' ? [found] : []
  },
  deriveResultType(def, context) {
    const found = findTarget(def, context)
    if (typeof found === 'string') throw new Error(`deriveResultType on an unchecked lookup: ${found}`)
    return found.type as StoredTypeName
  },
})

function findTarget(def: FieldDef, context: DefinitionContext): FieldDef | string {
  const config = def.lookupConfig
  if (!config) return 'type lookup needs lookupConfig { relationField, targetField }'
  const relation = context.fields.find((f) => f.name === config.relationField)
  if (!relation || relation.type !== 'relation' || relation.relationConfig?.relationType !== 'belongsTo') {
    return `lookupConfig.relationField "${config.relationField}" is not a belongsTo relation field of this collection`
  }
  const target = relation.relationConfig.targetCollection
  if (target === usersTarget) return notThroughUsers(relation.name, 'lookups')
  const targetFields = fieldsOf(context, target)
  if (!targetFields)
    return `relation "${relation.name}" points at "${target}", which is not a collection of this project`
  const field = targetFields.find((f) => f.name === config.targetField)
  if (!field) return `lookupConfig.targetField "${config.targetField}" is not a field of ${target}`
  if (field.type === 'lookup' || field.type === 'rollup')
    return `lookupConfig.targetField "${field.name}" is computed; look up a stored field`
  if (field.translatable === true)
    return `lookupConfig.targetField "${field.name}" is translatable, which lookups do not support`
  if (field.type === 'relation' && field.relationConfig?.relationType === 'hasMany') {
    return `lookupConfig.targetField "${field.name}" is a hasMany relation, which lookups do not support`
  }
  return field
}
