export type { CollectionEvents, CollectionUpdateEvent } from './events.js'
export { searchCondition, searchableFields } from './search-index.js'
export { indexColumn, systemColumns } from './definition/index.js'
export { createdAtIndexName } from './ddl-indexes.js'
export {
  fieldTypeOf,
  FieldValueError,
  targetsUsers,
  userProfileFields,
  usersTarget,
  type FieldDef,
  type FieldTypeName,
} from './field-types/index.js'
export { jsonDepthLimit, jsonProblem } from './field-types/json-value.js'
export type { PublishResult } from './r2-sql/r2-sql.js'
export { documentReturning, documentSet, documentSource, packDocument } from './document-table.js'
export {
  createCollectionsService,
  layoutOf,
  type Collection,
  type CollectionsService,
  type ColumnStatus,
  type FieldChangeHooks,
  type StorageType,
} from './service.js'
export * as structures from './field-types/structure.js'
export { collectionsRoutes } from './routes.js'
export { createCollectionsModule, type CollectionsModuleDeps } from './module.js'
export { mentionsField, type FieldReference, type FieldReferenceQuery } from './references.js'
export { accessCreateShape, collectionCreateShape, collectionDesiredShape } from './create-shape.js'
export { CreateCollectionSchema, UpdateCollectionSchema } from './schemas.js'
