import {
  createRouter,
  dataEnvelope,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../lib/http/index.js'
import {
  ChangePreviewSchema,
  CollectionDetailSchema,
  CollectionSchema,
  CreateCollectionSchema,
  NameParams,
  RenameReportSchema,
  UpdateCollectionSchema,
} from './schemas.js'
import type { Collection, CollectionsService } from './service.js'

const tags = ['Collections']
const schemaErrors = [
  'invalid_request',
  'invalid_name',
  'reserved_name',
  'reserved_field',
  'duplicate_field',
  'invalid_field',
  'unauthorized',
  'forbidden',
] as const

const listCollections = defineRoute({
  method: 'get',
  path: '/api/v1/collections',
  operationId: 'collections.list',
  summary: 'Collections of the project the caller may read',
  tags,
  permission: 'collections/*:read',
  responses: {
    200: jsonContent(z.object({ data: z.array(CollectionSchema) }), 'Collections'),
    ...errorResponses('unauthorized'),
  },
})
const getCollection = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}',
  operationId: 'collections.get',
  summary: 'One collection with its column statuses',
  tags,
  permission: 'collections/{name}:read',
  request: { params: NameParams },
  responses: {
    200: jsonContent(z.object({ data: CollectionDetailSchema }), 'The collection'),
    ...errorResponses('unauthorized', 'collection_not_found'),
  },
})
const createCollection = defineRoute({
  method: 'post',
  path: '/api/v1/collections',
  operationId: 'collections.create',
  summary: 'Create a collection and its table',
  tags,
  permission: 'schema/*:create',
  request: jsonBody(CreateCollectionSchema),
  responses: {
    201: jsonContent(dataEnvelope(CollectionSchema), 'Created'),
    ...errorResponses(...schemaErrors, 'not_found', 'already_exists', 'ddl_error'),
  },
})
const updateCollection = defineRoute({
  method: 'patch',
  path: '/api/v1/collections/{name}',
  operationId: 'collections.update',
  summary:
    'Add, rename, drop and change fields (enum values, required, labels, indexes), declare compound indexes, change access control',
  tags,
  permission: 'schema/*:update',
  request: { params: NameParams, ...jsonBody(UpdateCollectionSchema) },
  responses: {
    200: jsonContent(
      z.object({
        data: CollectionSchema,
        meta: z.object({ renames: z.array(RenameReportSchema) }).optional(),
      }),
      'Updated; meta.renames tells what each rename rewrote and what it left',
    ),
    ...errorResponses(...schemaErrors, 'collection_not_found', 'already_exists', 'conflict', 'ddl_error'),
  },
})
const previewChanges = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/changes/preview',
  operationId: 'collections.previewChanges',
  summary:
    'What a PATCH with this body would do: each change, the rows it touches, what it would refuse; writes nothing',
  tags,
  permission: 'schema/*:update',
  request: { params: NameParams, ...jsonBody(UpdateCollectionSchema) },
  responses: {
    200: jsonContent(dataEnvelope(ChangePreviewSchema), 'The preview (a refusal the rows make is in data.refusal)'),
    ...errorResponses(...schemaErrors, 'collection_not_found', 'ddl_error'),
  },
})
const deleteCollection = defineRoute({
  method: 'delete',
  path: '/api/v1/collections/{name}',
  operationId: 'collections.delete',
  summary: 'Drop a collection, its table and all its data',
  tags,
  permission: 'schema/*:delete',
  request: { params: NameParams },
  responses: {
    200: jsonContent(z.object({ success: z.literal(true) }), 'Dropped'),
    ...errorResponses('unauthorized', 'forbidden', 'collection_not_found', 'conflict', 'ddl_error'),
  },
})

function wire(c: Collection) {
  return {
    id: c.id,
    projectId: c.projectId,
    name: c.name,
    storageType: c.storageType,
    databaseId: c.databaseId,
    schemaVersion: c.schemaVersion,
    fields: c.fields as unknown as Record<string, unknown>[],
    indexes: c.indexes.map((i) => ({ name: i.name, fields: [...i.fields], unique: i.unique })),
    accessControl: c.accessControl,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  }
}

/**
 * /api/v1/collections. Reads go through `readSecurity` (the caller is resolved, the service decides what
 * it may see: a collection it may not read is as missing); schema changes need their permission.
 */
export function collectionsRoutes(collections: CollectionsService, security: Security, readSecurity: Security) {
  const reads = createRouter(readSecurity)
  reads.openapi(listCollections, async (c) => {
    const p = principalOf(c)
    return c.json({ data: (await collections.visibleTo(p)).map(wire) }, 200)
  })
  reads.openapi(getCollection, async (c) => {
    const p = principalOf(c)
    const collection = await collections.visible(p, c.req.valid('param').name)
    const columnStatuses = await collections.columnStatuses(collection)
    return c.json({ data: { ...wire(collection), columnStatuses, policyKey: `collections/${collection.name}` } }, 200)
  })

  const writes = createRouter(security)
  writes.openapi(createCollection, async (c) => {
    const p = principalOf(c)
    return c.json({ data: wire(await collections.create(p, c.req.valid('json'))) }, 201)
  })
  // The read-only properties a client sent back (id, schemaVersion, …) are ignored: not passed on.
  const changeInput = (body: z.infer<typeof UpdateCollectionSchema>) => {
    const { fields, indexes, accessControl, name, storageType, databaseId, enumChanges, renames, drop } = body
    return { fields, indexes, accessControl, name, storageType, databaseId, enumChanges, renames, drop }
  }
  writes.openapi(updateCollection, async (c) => {
    const updated = await collections.update(
      principalOf(c),
      c.req.valid('param').name,
      changeInput(c.req.valid('json')),
    )
    const meta = updated.renames.length > 0 ? { renames: updated.renames } : undefined
    return c.json({ data: wire(updated.collection), meta }, 200)
  })
  writes.openapi(previewChanges, async (c) => {
    const preview = await collections.preview(
      principalOf(c),
      c.req.valid('param').name,
      changeInput(c.req.valid('json')),
    )
    return c.json({ data: preview }, 200)
  })
  writes.openapi(deleteCollection, async (c) => {
    const p = principalOf(c)
    await collections.delete(p, c.req.valid('param').name)
    return c.json({ success: true as const }, 200)
  })
  return [reads, writes]
}
