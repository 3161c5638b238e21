import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  queryInteger,
  z,
  type Security,
} from '../../lib/http/index.js'
import {
  CreateSearchIndexSchema,
  IndexName,
  SearchHitSchema,
  searchIndexLimits,
  SearchIndexSchema,
  UpdateSearchIndexSchema,
} from './schemas.js'
import type { SearchIndexesService } from './service.js'

const tags = ['Search indexes']
const resource = 'system/search-indexes'
const NameParams = z.object({ name: IndexName })
const One = z.object({ data: SearchIndexSchema })

const listIndexes = defineRoute({
  method: 'get',
  path: '/api/v1/search-indexes',
  operationId: 'searchIndexes.list',
  summary: 'Search indexes of the project with their build state',
  tags,
  permission: `${resource}:read`,
  responses: {
    200: jsonContent(z.object({ data: z.array(SearchIndexSchema) }), 'Search indexes'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const getIndex = defineRoute({
  method: 'get',
  path: '/api/v1/search-indexes/{name}',
  operationId: 'searchIndexes.get',
  summary: 'One search index: sources, status, builtAt, documentCount',
  tags,
  permission: `${resource}:read`,
  request: { params: NameParams },
  responses: {
    200: jsonContent(One, 'The index'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createIndex = defineRoute({
  method: 'post',
  path: '/api/v1/search-indexes',
  operationId: 'searchIndexes.create',
  summary: 'Define a search index over fields of collections (status stale until built)',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateSearchIndexSchema),
  responses: {
    201: jsonContent(One, 'Saved'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'collection_not_found',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const updateIndex = defineRoute({
  method: 'patch',
  path: '/api/v1/search-indexes/{name}',
  operationId: 'searchIndexes.update',
  summary: 'Change the description or the sources (the index is then stale)',
  tags,
  permission: `${resource}:update`,
  request: { params: NameParams, ...jsonBody(UpdateSearchIndexSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'collection_not_found',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const deleteIndex = defineRoute({
  method: 'delete',
  path: '/api/v1/search-indexes/{name}',
  operationId: 'searchIndexes.delete',
  summary: 'Delete a search index and its built file',
  tags,
  permission: `${resource}:delete`,
  request: { params: NameParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const rebuildIndex = defineRoute({
  method: 'post',
  path: '/api/v1/search-indexes/{name}/rebuild',
  operationId: 'searchIndexes.rebuild',
  summary: 'Rebuild the index in the background, as the caller (status building)',
  tags,
  permission: `${resource}:execute`,
  request: { params: NameParams },
  responses: {
    202: jsonContent(One, 'The build started'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const queryIndex = defineRoute({
  method: 'get',
  path: '/api/v1/search-indexes/{name}/query',
  operationId: 'searchIndexes.query',
  summary: 'Search the built index: words, "phrases", prefix*; bm25 ranking; snippets',
  tags,
  permission: `${resource}:read`,
  request: {
    params: NameParams,
    query: z.object({
      q: z
        .string()
        .min(1)
        .max(searchIndexLimits.queryLength)
        .openapi({ description: 'Words (all must match), "quoted phrases", word* for a prefix' }),
      limit: queryInteger({ min: 1, max: searchIndexLimits.queryLimit, default: 20 }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({ data: z.array(SearchHitSchema), index: SearchIndexSchema }),
      'Hits, best first, and the index they come from',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'service_unavailable'),
  },
})

/** /api/v1/search-indexes (decision 042). */
export function searchIndexesRoutes(indexes: SearchIndexesService, security: Security) {
  const router = createRouter(security)
  router.openapi(listIndexes, async (c) => c.json({ data: await indexes.list(principalOf(c)) }, 200))
  router.openapi(getIndex, async (c) =>
    c.json({ data: await indexes.get(principalOf(c), c.req.valid('param').name) }, 200),
  )
  router.openapi(createIndex, async (c) =>
    c.json({ data: await indexes.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(updateIndex, async (c) =>
    c.json({ data: await indexes.update(principalOf(c), c.req.valid('param').name, c.req.valid('json')) }, 200),
  )
  router.openapi(deleteIndex, async (c) => {
    await indexes.delete(principalOf(c), c.req.valid('param').name)
    return c.body(null, 204)
  })
  router.openapi(rebuildIndex, async (c) =>
    c.json({ data: await indexes.rebuild(principalOf(c), c.req.valid('param').name) }, 202),
  )
  router.openapi(queryIndex, async (c) => {
    const { q, limit } = c.req.valid('query')
    return c.json(await indexes.query(principalOf(c), c.req.valid('param').name, q, limit), 200)
  })
  return router
}
