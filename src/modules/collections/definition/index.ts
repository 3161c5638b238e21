export { AccessControlSchema, type AccessControl } from './access-control.js'
export {
  FieldDefInputSchema,
  LookupConfigSchema,
  RelationConfigSchema,
  RollupConfigSchema,
  ValidationRulesSchema,
  type FieldDefInput,
} from './field-def-schema.js'
export {
  checkCollectionName,
  checkFieldName,
  databaseReservedColumns,
  derivedNameSeparator,
  namePattern,
  reservedCollectionNames,
  reservedCollectionPrefix,
} from './names.js'
export { draftFields, fieldLimit, normaliseFields, type NormaliseContext } from './normalise-fields.js'
export { isSystemColumn, systemColumnNames, systemColumns, type SystemColumn } from './system-columns.js'
export {
  compoundIndexLimits,
  compoundIndexName,
  indexColumn,
  indexColumnIsText,
  normaliseIndexes,
  type CompoundIndex,
} from './compound-indexes.js'
