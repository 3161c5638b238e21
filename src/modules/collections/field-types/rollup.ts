import { decodeByKind } from './decode.js'
import { defineFieldType, type FieldType } from './define-field-type.js'
import { fieldsOf, type DefinitionContext, type FieldDef, type RollupConfig, type StoredTypeName } from './field-def.js'
import { FieldValueError } from './field-value-error.js'
// Read inside functions only: the registry imports this file (the cycle is safe at run time).
import { plainValueKind } from './registry.js'
import { notThroughUsers, usersTarget } from './users-target.js'

/** The target types each aggregate accepts; min and max also order datetimes and dates. */
export const rollupTargetTypes: Readonly<
  Record<Exclude<RollupConfig['function'], 'count'>, readonly StoredTypeName[]>
> = {
  sum: ['integer', 'decimal', 'number'],
  avg: ['integer', 'decimal', 'number'],
  min: ['integer', 'decimal', 'number', 'datetime', 'date'],
  max: ['integer', 'decimal', 'number', 'datetime', 'date'],
}

/**
 * count, sum, avg, min or max over the records of a hasMany relation. Computed: never written, no
 * column. Derived `resultType`: count → integer, avg → number, sum/min/max → the target field's type.
 * Typed by hand: its functions read FieldDef, whose type names come from the registry holding this value.
 */
export const rollupField: FieldType<'rollup'> = defineFieldType({
  type: 'rollup',
  label: 'Rollup',
  computed: true,
  options: ['rollupConfig'],
  column: () => null,
  valueKind: (def) => plainValueKind(def.resultType ?? 'number'),
  write(_value, def) {
    throw new FieldValueError(
      'invalid_field',
      def.name,
      `Field "${def.name}" is a rollup, computed by the server, and cannot be written`,
    )
  },
  read: (value, def, dialect) => decodeByKind(value, plainValueKind(def.resultType ?? 'number'), dialect),
  checkDefinition(def, context) {
    const found = findTarget(def, context)
    return typeof found === 'string' ? [found] : []
  },
  deriveResultType(def, context) {
    const found = findTarget(def, context)
    if (typeof found === 'string') throw new Error(`deriveResultType on an unchecked rollup: ${found}`)
    const fn = def.rollupConfig?.function
    if (fn === 'count') return 'integer'
    if (fn === 'avg') return 'number'
    return found!.type as StoredTypeName
  },
})

// The target field (null for a count without one), or the problem.
function findTarget(def: FieldDef, context: DefinitionContext): FieldDef | null | string {
  const config = def.rollupConfig
  if (!config) return 'type rollup needs rollupConfig { relationField, function, targetField }'
  const relation = context.fields.find((f) => f.name === config.relationField)
  if (!relation || relation.type !== 'relation' || relation.relationConfig?.relationType !== 'hasMany') {
    return `rollupConfig.relationField "${config.relationField}" is not a hasMany relation field of this collection`
  }
  const target = relation.relationConfig.targetCollection
  if (target === usersTarget) return notThroughUsers(relation.name, 'rollups')
  const targetFields = fieldsOf(context, target)
  if (!targetFields)
    return `relation "${relation.name}" points at "${target}", which is not a collection of this project`
  if (config.targetField === undefined) {
    return config.function === 'count' ? null : `rollupConfig.targetField is required for ${config.function}`
  }
  const field = targetFields.find((f) => f.name === config.targetField)
  if (!field) return `rollupConfig.targetField "${config.targetField}" is not a field of ${target}`
  if (field.type === 'lookup' || field.type === 'rollup')
    return `rollupConfig.targetField "${field.name}" is computed; roll up a stored field`
  if (config.function === 'count') return field
  const accepted = rollupTargetTypes[config.function]
  if (!accepted.includes(field.type as StoredTypeName) || field.translatable === true) {
    return `rollupConfig.targetField "${field.name}" is ${field.type}; ${config.function} needs one of ${accepted.join(', ')}`
  }
  return field
}
