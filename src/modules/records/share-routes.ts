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
import type { SharesService } from './shares.js'

const tags = ['Records']
const ShareSchema = z
  .object({
    id: z.string(),
    recordId: z.string(),
    userId: z.string(),
    access: z.enum(['view', 'comment', 'edit']),
    createdAt: z.number().int(),
  })
  .openapi('Share')
const Params = z.object({ name: z.string().min(1).max(100), id: z.string().min(1).max(64) })
const errors = ['invalid_request', 'unauthorized', 'forbidden', 'collection_not_found', 'record_not_found'] as const

const listShares = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/records/{id}/shares',
  operationId: 'records.shares',
  summary: "A record's shares (owner or administrator)",
  tags,
  permission: 'collections/{name}:read',
  request: { params: Params },
  responses: { 200: jsonContent(z.object({ data: z.array(ShareSchema) }), 'Shares'), ...errorResponses(...errors) },
})
const createShare = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/records/{id}/shares',
  operationId: 'records.share',
  summary: 'Share a record with a person (owner or administrator, with update on it)',
  tags,
  permission: 'collections/{name}:update',
  request: {
    params: Params,
    ...jsonBody(
      z.object({
        userId: z.string().max(64).optional(),
        userEmail: z.string().max(254).optional(),
        access: z.enum(['view', 'comment', 'edit']),
      }),
    ),
  },
  responses: { 201: jsonContent(z.object({ data: ShareSchema }), 'Shared'), ...errorResponses(...errors, 'not_found') },
})
const deleteShare = defineRoute({
  method: 'delete',
  path: '/api/v1/collections/{name}/records/{id}/shares/{shareId}',
  operationId: 'records.unshare',
  summary: 'Remove a share (owner or administrator, with update on it)',
  tags,
  permission: 'collections/{name}:update',
  request: { params: Params.extend({ shareId: z.string().min(1).max(64) }) },
  responses: {
    200: jsonContent(z.object({ success: z.literal(true) }), 'Removed'),
    ...errorResponses(...errors, 'not_found'),
  },
})

/** Record shares; the service checks ownership and update on the record (the guard only resolves the caller). */
export function shareRoutes(shares: SharesService, readSecurity: Security) {
  const router = createRouter(readSecurity)
  router.openapi(listShares, async (c) => {
    const { name, id } = c.req.valid('param')
    return c.json({ data: await shares.list(principalOf(c), name, id) }, 200)
  })
  router.openapi(createShare, async (c) => {
    const { name, id } = c.req.valid('param')
    return c.json({ data: await shares.share(principalOf(c), name, id, c.req.valid('json')) }, 201)
  })
  router.openapi(deleteShare, async (c) => {
    const { name, id, shareId } = c.req.valid('param')
    await shares.unshare(principalOf(c), name, id, shareId)
    return c.json({ success: true as const }, 200)
  })
  return router
}
