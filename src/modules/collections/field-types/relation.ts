import { decodeJson } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { fieldsOf, type FieldDef } from './field-def.js'
import { invalidValue } from './field-value-error.js'
import { jsonColumn, textColumn } from './text-like.js'
import { userProfileFields, usersTarget } from './users-target.js'

/**
 * A link to records of `relationConfig.targetCollection`, or to the project's users when it is `users`
 * (decision 061): belongsTo holds one id, hasMany a list of distinct ids (stored as JSON). Record ids are checked for shape only (privileged callers may choose
 * their own ids); whether the records exist is the records service's check.
 */
export const recordIdPattern = /^[A-Za-z0-9_-]{1,64}$/
export const hasManyLimit = 1000

const isHasMany = (def: FieldDef): boolean => def.relationConfig?.relationType === 'hasMany'

export const relationField = defineFieldType({
  type: 'relation',
  label: 'Relation',
  options: ['relationConfig'],
  column: (def, dialect) => (isHasMany(def) ? jsonColumn(dialect) : textColumn(dialect)),
  valueKind: (def) => (isHasMany(def) ? 'json' : 'text'),
  write(value, def) {
    if (!isHasMany(def)) {
      if (typeof value !== 'string' || !recordIdPattern.test(value)) throw invalidValue(def.name, 'a record id', value)
      return value
    }
    if (!Array.isArray(value) || value.length > hasManyLimit)
      throw invalidValue(def.name, `a list of at most ${hasManyLimit} record ids`, value)
    const seen = new Set<string>()
    for (const id of value as unknown[]) {
      if (typeof id !== 'string' || !recordIdPattern.test(id)) throw invalidValue(def.name, 'a list of record ids', id)
      if (seen.has(id)) throw invalidValue(def.name, 'a list without repeated ids', id)
      seen.add(id)
    }
    return [...seen]
  },
  read: (value, def, dialect) => (isHasMany(def) ? decodeJson(value, dialect) : value),
  checkDefinition(def, context) {
    const config = def.relationConfig
    if (!config) return ['type relation needs relationConfig { targetCollection, relationType: belongsTo | hasMany }']
    if (config.targetCollection === usersTarget) {
      const display = config.displayField
      if (display !== undefined && !(userProfileFields as readonly string[]).includes(display))
        return [
          `relationConfig.displayField "${display}" is not a profile field of users (${userProfileFields.join(', ')})`,
        ]
      return []
    }
    const targetFields = fieldsOf(context, config.targetCollection)
    if (!targetFields)
      return [`relationConfig.targetCollection "${config.targetCollection}" is not a collection of this project`]
    const display = config.displayField
    if (display !== undefined && display !== 'id' && !targetFields.some((f) => f.name === display)) {
      return [`relationConfig.displayField "${display}" is not a field of ${config.targetCollection}`]
    }
    return []
  },
})
