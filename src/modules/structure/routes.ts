import { AppError, isAppError } from '../../lib/errors.js'
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
  CollectionOptionsQuery,
  CollectionOptionsSchema,
  CollectionParams,
  FieldOptionsQuery,
  FieldOptionsSchema,
  FieldParams,
  JobParams,
  JobSchema,
  RepairBody,
  ScanPageSchema,
  ScanQuery,
} from './schemas.js'
import { builderPermission, type StructureService } from './service.js'

const tags = ['Structure']
const builder = builderPermission
const optionErrors = ['invalid_request', 'unauthorized', 'COLLECTION_NOT_FOUND', 'NOT_FOUND'] as const
const scanErrors = [
  'invalid_request',
  'unauthorized',
  'FORBIDDEN',
  'COLLECTION_NOT_FOUND',
  'NOT_FOUND',
  'VALIDATION_ERROR',
] as const
const job = (description: string) => jsonContent(z.object({ data: JobSchema }), description)

const fieldOptions = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/fields/{field}/options',
  operationId: 'structure.fieldOptions',
  summary: 'Allowed values of a field, with localised labels',
  tags,
  permission: 'collections/{name}:read',
  request: { params: FieldParams, query: FieldOptionsQuery },
  responses: {
    200: jsonContent(z.object({ data: FieldOptionsSchema }), 'The field’s option sets'),
    ...errorResponses(...optionErrors),
  },
})
const collectionOptions = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/options',
  operationId: 'structure.collectionOptions',
  summary: 'Allowed values of several fields; fields without any are left out',
  tags,
  permission: 'collections/{name}:read',
  request: { params: CollectionParams, query: CollectionOptionsQuery },
  responses: {
    200: jsonContent(z.object({ data: CollectionOptionsSchema }), 'Option sets per field'),
    ...errorResponses(...optionErrors),
  },
})
const scan = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/fields/{field}/scan',
  operationId: 'structure.scan',
  summary: 'Check one batch of records against the field’s structure',
  tags,
  permission: builder,
  request: { params: FieldParams, query: ScanQuery },
  responses: {
    200: jsonContent(z.object({ data: ScanPageSchema }), 'One batch; follow nextCursor until null'),
    ...errorResponses(...scanErrors, 'conflict'),
  },
})
const startScan = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/fields/{field}/scan-jobs',
  operationId: 'structure.startScan',
  summary: 'Scan the whole collection in the background',
  tags,
  permission: builder,
  request: { params: FieldParams },
  responses: { 202: job('The job, running'), ...errorResponses(...scanErrors) },
})
const startRepair = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/fields/{field}/repair-jobs',
  operationId: 'structure.startRepair',
  summary: 'Apply fixes from a scan as ordinary updates by the caller',
  tags,
  permission: builder,
  request: { params: FieldParams, ...jsonBody(RepairBody) },
  responses: { 202: job('The job, running'), ...errorResponses(...scanErrors) },
})

function jobRoutes(kind: 'scan' | 'repair') {
  const path = `/api/v1/collections/{name}/${kind}-jobs/{jobId}`
  return {
    get: defineRoute({
      method: 'get',
      path,
      operationId: `structure.get${kind === 'scan' ? 'Scan' : 'Repair'}Job`,
      summary: `A ${kind} job and its report`,
      tags,
      permission: builder,
      request: { params: JobParams },
      responses: {
        200: job('The job'),
        ...errorResponses('unauthorized', 'FORBIDDEN', 'COLLECTION_NOT_FOUND', 'NOT_FOUND'),
      },
    }),
    cancel: defineRoute({
      method: 'delete',
      path,
      operationId: `structure.cancel${kind === 'scan' ? 'Scan' : 'Repair'}Job`,
      summary: `Cancel a ${kind} job (its report so far is kept)`,
      tags,
      permission: builder,
      request: { params: JobParams },
      responses: {
        200: job('The job'),
        ...errorResponses('unauthorized', 'FORBIDDEN', 'COLLECTION_NOT_FOUND', 'NOT_FOUND'),
      },
    }),
  }
}

/** The builder grant, refused with the spec's upper-case FORBIDDEN (core-api "Structure scan and repair endpoints"). */
function builderSecurity(security: Security): Security {
  return {
    authenticate: security.authenticate,
    async authorize(principal, permission) {
      try {
        await security.authorize(principal, permission)
      } catch (err) {
        if (isAppError(err) && err.code === 'forbidden') throw new AppError('FORBIDDEN', err.message, err.details)
        throw err
      }
    },
  }
}

/**
 * Field options (any caller who may read the collection; the service decides) and structure scans and
 * repairs (the builder grant).
 */
export function structureRoutes(service: StructureService, security: Security, readSecurity: Security) {
  const reads = createRouter(readSecurity)
  reads.openapi(fieldOptions, async (c) => {
    const { name, field } = c.req.valid('param')
    return c.json({ data: await service.fieldOptions(principalOf(c), name, field, c.req.valid('query').locale) }, 200)
  })
  reads.openapi(collectionOptions, async (c) => {
    const { fields, locale } = c.req.valid('query')
    return c.json(
      { data: await service.collectionOptions(principalOf(c), c.req.valid('param').name, fields, locale) },
      200,
    )
  })

  const builders = createRouter(builderSecurity(security))
  builders.openapi(scan, async (c) => {
    const { name, field } = c.req.valid('param')
    return c.json({ data: await service.scan(principalOf(c), name, field, c.req.valid('query')) }, 200)
  })
  builders.openapi(startScan, async (c) => {
    const { name, field } = c.req.valid('param')
    return c.json({ data: await service.startScan(principalOf(c), name, field) }, 202)
  })
  builders.openapi(startRepair, async (c) => {
    const { name, field } = c.req.valid('param')
    return c.json({ data: await service.startRepair(principalOf(c), name, field, c.req.valid('json').fixes) }, 202)
  })
  for (const kind of ['scan', 'repair'] as const) {
    const routes = jobRoutes(kind)
    builders.openapi(routes.get, async (c) => {
      const { name, jobId } = c.req.valid('param')
      return c.json({ data: await service.job(principalOf(c), name, kind, jobId) }, 200)
    })
    builders.openapi(routes.cancel, async (c) => {
      const { name, jobId } = c.req.valid('param')
      return c.json({ data: await service.cancel(principalOf(c), name, kind, jobId) }, 200)
    })
  }
  return [reads, builders]
}
