export type {
  DefinitionContext,
  Dialect,
  FieldDef,
  FieldTypeName,
  LookupConfig,
  OnDelete,
  RelationConfig,
  RelationType,
  RollupConfig,
  RollupFunction,
  StoredTypeName,
  ValidationRules,
  ValueKind,
} from './field-def.js'
export { fieldsOf } from './field-def.js'
export {
  defineFieldType,
  type FieldOption,
  type FieldType,
  type FieldTypeSpec,
  type RuleName,
} from './define-field-type.js'
export { FieldValueError, preview, type FieldValueCode } from './field-value-error.js'
export { fieldTypeOf, fieldTypes, findFieldType } from './registry.js'
export { patternLimits } from './safe-pattern.js'
export { notThroughUsers, targetsUsers, userProfileFields, usersTarget } from './users-target.js'
