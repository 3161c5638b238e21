export { createSearchIndexesModule, type SearchIndexesModuleDeps } from './module.js'
export type { SearchHit, SearchIndex, SearchIndexSource } from './schemas.js'
export type { SearchIndexesService } from './service.js'
export { ftsExpression } from './fts-query.js'
