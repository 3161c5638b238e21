import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../lib/http/index.js'
import {
  ConnectionTestSchema,
  CreateConnectionSchema,
  StorageConnectionSchema,
  UpdateConnectionSchema,
} from './schemas.js'
import type { StorageConnectionsService } from './service.js'

const tags = ['Storage connections']
const resource = 'system/storage-connections'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: StorageConnectionSchema })

const listConnections = defineRoute({
  method: 'get',
  path: '/api/v1/storage-connections',
  operationId: 'storageConnections.list',
  summary: 'Storage connections of the project (never the secret keys)',
  tags,
  permission: `${resource}:read`,
  responses: {
    200: jsonContent(z.object({ data: z.array(StorageConnectionSchema) }), 'Connections'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const getConnection = defineRoute({
  method: 'get',
  path: '/api/v1/storage-connections/{id}',
  operationId: 'storageConnections.get',
  summary: 'One storage connection (no secret)',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The connection'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createConnection = defineRoute({
  method: 'post',
  path: '/api/v1/storage-connections',
  operationId: 'storageConnections.create',
  summary: 'Save an S3-compatible storage connection',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateConnectionSchema),
  responses: {
    201: jsonContent(One, 'Saved'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'unsupported_media_type'),
  },
})
const updateConnection = defineRoute({
  method: 'put',
  path: '/api/v1/storage-connections/{id}',
  operationId: 'storageConnections.update',
  summary:
    'Change a storage connection; an omitted secretKey keeps the stored one, unless the endpoint moves to another origin',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(UpdateConnectionSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'unsupported_media_type'),
  },
})
const deleteConnection = defineRoute({
  method: 'delete',
  path: '/api/v1/storage-connections/{id}',
  operationId: 'storageConnections.delete',
  summary: 'Forget a storage connection; the bucket is untouched',
  tags,
  permission: `${resource}:delete`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const testConnection = defineRoute({
  method: 'post',
  path: '/api/v1/storage-connections/{id}/test',
  operationId: 'storageConnections.test',
  summary: 'List one key of the bucket with the stored credentials',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(
      ConnectionTestSchema,
      'The outcome: success true, or success false with a reason (the test ran; the store refused or was unreachable)',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})

/** /api/v1/storage-connections (core-api "Storage connection endpoints"); the bare /api/ alias is mapped by the HTTP layer. */
export function storageConnectionsRoutes(connections: StorageConnectionsService, security: Security) {
  const router = createRouter(security)
  router.openapi(listConnections, async (c) => c.json({ data: await connections.list(principalOf(c)) }, 200))
  router.openapi(getConnection, async (c) =>
    c.json({ data: await connections.get(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(createConnection, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await connections.create(p, c.req.valid('json')) }, 201)
  })
  router.openapi(updateConnection, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await connections.update(p, c.req.valid('param').id, c.req.valid('json')) }, 200)
  })
  router.openapi(deleteConnection, async (c) => {
    const p = principalOf(c)
    await connections.delete(p, c.req.valid('param').id)
    return c.body(null, 204)
  })
  router.openapi(testConnection, async (c) =>
    c.json(await connections.test(principalOf(c), c.req.valid('param').id), 200),
  )
  return router
}
