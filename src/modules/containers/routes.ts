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
import { ContainerSchema, CreateContainerSchema, UpdateContainerSchema } from './schemas.js'
import type { ContainersService } from './service.js'

const tags = ['Containers']
const resource = 'system/containers'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: ContainerSchema })

const listContainers = defineRoute({
  method: 'get',
  path: '/api/v1/containers',
  operationId: 'containers.list',
  summary: 'File containers of the project, by name',
  tags,
  permission: `${resource}:read`,
  request: {
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(ContainerSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of containers',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getContainer = defineRoute({
  method: 'get',
  path: '/api/v1/containers/{id}',
  operationId: 'containers.get',
  summary: 'One file container',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The container'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createContainer = defineRoute({
  method: 'post',
  path: '/api/v1/containers',
  operationId: 'containers.create',
  summary: 'Save a file container (its storage connection is looked up as the caller)',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateContainerSchema),
  responses: {
    201: jsonContent(One, 'Saved'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const updateContainer = defineRoute({
  method: 'patch',
  path: '/api/v1/containers/{id}',
  operationId: 'containers.update',
  summary: 'Change a file container (files already stored stay where they are)',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(UpdateContainerSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const deleteContainer = defineRoute({
  method: 'delete',
  path: '/api/v1/containers/{id}',
  operationId: 'containers.delete',
  summary: 'Delete a file container no file was uploaded into (409 otherwise)',
  tags,
  permission: `${resource}:delete`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict'),
  },
})

/** /api/v1/containers (decision 066). */
export function containersRoutes(containers: ContainersService, security: Security) {
  const router = createRouter(security)
  router.openapi(listContainers, async (c) => {
    const { page, limit } = c.req.valid('query')
    const { data, total } = await containers.list(principalOf(c), page, limit)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(getContainer, async (c) =>
    c.json({ data: await containers.get(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(createContainer, async (c) =>
    c.json({ data: await containers.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(updateContainer, async (c) =>
    c.json({ data: await containers.update(principalOf(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  )
  router.openapi(deleteContainer, async (c) => {
    await containers.delete(principalOf(c), c.req.valid('param').id)
    return c.body(null, 204)
  })
  return router
}
