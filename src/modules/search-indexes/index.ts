export { createSearchIndexesModule, type SearchIndexesModuleDeps } from './module.js'
export type { SearchHit, SearchIndex, SearchIndexSource } from './schemas.js'
export type { SearchIndexesService } from './service.js'
export { ftsExpression } from './fts-query.js'
export { searchIndexCreateShape } from './create-shape.js'
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateSearchIndexSchema, UpdateSearchIndexSchema } from './schemas.js'
