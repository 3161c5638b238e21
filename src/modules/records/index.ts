export { createRecordAccess, type RecordAccess } from './access.js'
export {
  actingPrincipalOf,
  createWriteHooks,
  type ApiRecord,
  type BeforeWrite,
  type BeforeWriteHook,
  type FieldChange,
  type RecordEvent,
  type RecordEvents,
  type WriteHooks,
} from './events.js'
export { recordsRoutes } from './routes.js'
export { recordScope, type RecordScope } from './scope.js'
export { createRecordsService, type RecordsService } from './service.js'
export { createSharesStore, type SharesStore } from './shares-store.js'
export { createSharesService, type Share, type SharesService } from './shares.js'
export { shareRoutes } from './share-routes.js'
export { createOpener, type Opener } from './context.js'
export { createBulkDelete, type BulkDelete } from './bulk.js'
export { createTransfer, type Transfer } from './transfer.js'
export { createTruncate, type Truncate } from './truncate.js'
export { createPublish, type Publish } from './publish.js'
export { recordDataRoutes } from './data-routes.js'
export { createRecordExporter, type RecordExporter } from './export.js'
export { createRecordImporter, type ImportPacePoint, type RecordImporter } from './import.js'
export { createImportJobs, type ImportJobs } from './import-jobs.js'
export { createSearchIndexSeam, type DependentIndexes, type SearchIndexSeam } from './search-indexes.js'
export { createGeoImporter, type GeoImporter } from './geo-import.js'
export { recordExchangeRoutes } from './exchange-routes.js'
export { presentRecord, recordVisible } from './visibility.js'
export type { Opened, ReadableFiles } from './context.js'
export { createFileReferences, type FileReferences } from './file-references.js'
export { requestFilter } from './list.js'
export { createRecordsModule, type RecordsModuleDeps } from './module.js'
export {
  aggregateFunctions,
  aggregateLimits,
  type AggregateFunction,
  type AggregateQuery,
  type AggregateRow,
  type AggregateSpec,
} from './aggregate.js'
export { maxSortKeys, type FindQuery, type SortKey } from './query.js'
export { recordCreateShape } from './create-shape.js'
