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
  CreateLensSchema,
  LensSchema,
  LensVersionSchema,
  PublishLensSchema,
  RenderQuerySchema,
  UpdateLensSchema,
} from './schemas.js'
import type { LensesService } from './service.js'

const tags = ['Lenses']
const resource = 'system/lenses'
const IdParams = z.object({ id: z.string().min(1).max(64) })
const One = z.object({ data: LensSchema })

/**
 * What a rendered HTML page may do, served from the API's own origin: nothing runs (sandbox, no script
 * source), nothing loads from elsewhere (a template cannot send the viewer's rows to another host in an
 * image URL), inline styles and data: images only.
 */
export const renderedHtmlPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

const listLenses = defineRoute({
  method: 'get',
  path: '/api/v1/lenses',
  operationId: 'lenses.list',
  summary: 'Lenses of the project, by name (drafts at the top level)',
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
        data: z.array(LensSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of lenses',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getLens = defineRoute({
  method: 'get',
  path: '/api/v1/lenses/{id}',
  operationId: 'lenses.get',
  summary: 'One lens: its draft, status and versions',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(One, 'The lens'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const createLens = defineRoute({
  method: 'post',
  path: '/api/v1/lenses',
  operationId: 'lenses.create',
  summary: 'Save a lens as a draft (its query is checked as the caller)',
  tags,
  permission: `${resource}:create`,
  request: jsonBody(CreateLensSchema),
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
const updateLens = defineRoute({
  method: 'patch',
  path: '/api/v1/lenses/{id}',
  operationId: 'lenses.update',
  summary: 'Change the draft (the published version is untouched until the next publish)',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(UpdateLensSchema) },
  responses: {
    200: jsonContent(One, 'Updated'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'collection_not_found',
      'already_exists',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const deleteLens = defineRoute({
  method: 'delete',
  path: '/api/v1/lenses/{id}',
  operationId: 'lenses.delete',
  summary: 'Delete a lens and its versions',
  tags,
  permission: `${resource}:delete`,
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted (no body)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const publishLens = defineRoute({
  method: 'post',
  path: '/api/v1/lenses/{id}/publish',
  operationId: 'lenses.publish',
  summary: 'Freeze the draft as the next immutable version, the one render uses',
  tags,
  permission: `${resource}:update`,
  request: { params: IdParams, ...jsonBody(PublishLensSchema) },
  responses: {
    200: jsonContent(One, 'Published'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'collection_not_found',
      'validation_error',
      'conflict',
      'unsupported_media_type',
    ),
  },
})
const lensVersions = defineRoute({
  method: 'get',
  path: '/api/v1/lenses/{id}/versions',
  operationId: 'lenses.versions',
  summary: 'The published versions of a lens, newest first',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams },
  responses: {
    200: jsonContent(z.object({ data: z.array(LensVersionSchema) }), 'Versions'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const renderLens = defineRoute({
  method: 'get',
  path: '/api/v1/lenses/{id}/render',
  operationId: 'lenses.render',
  summary:
    'Render the published version (or, with draft=true, the draft) as html, csv or md, as the caller; every other query parameter is a lens parameter',
  tags,
  permission: `${resource}:read`,
  request: { params: IdParams, query: RenderQuerySchema },
  responses: {
    200: {
      description: 'The rendered lens (Content-Type by format; X-Lens-Version: the version, or draft)',
      content: {
        'text/html': { schema: z.string() },
        'text/csv': { schema: z.string() },
        'text/markdown': { schema: z.string() },
      },
    },
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'collection_not_found',
      'conflict',
      'limit_exceeded',
    ),
  },
})

/** /api/v1/lenses (decision 041). */
export function lensesRoutes(lenses: LensesService, security: Security) {
  const router = createRouter(security)
  router.openapi(listLenses, async (c) => {
    const { page, limit } = c.req.valid('query')
    const { data, total } = await lenses.list(principalOf(c), page, limit)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(getLens, async (c) => c.json({ data: await lenses.get(principalOf(c), c.req.valid('param').id) }, 200))
  router.openapi(createLens, async (c) =>
    c.json({ data: await lenses.create(principalOf(c), c.req.valid('json')) }, 201),
  )
  router.openapi(updateLens, async (c) =>
    c.json({ data: await lenses.update(principalOf(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  )
  router.openapi(deleteLens, async (c) => {
    await lenses.delete(principalOf(c), c.req.valid('param').id)
    return c.body(null, 204)
  })
  router.openapi(publishLens, async (c) =>
    c.json(
      { data: await lenses.publish(principalOf(c), c.req.valid('param').id, c.req.valid('json').changeSummary) },
      200,
    ),
  )
  router.openapi(lensVersions, async (c) =>
    c.json({ data: await lenses.versions(principalOf(c), c.req.valid('param').id) }, 200),
  )
  router.openapi(renderLens, async (c) => {
    const { format, draft } = c.req.valid('query')
    // Every query parameter but the route's own is a lens parameter; one sent twice is refused by the service as a list.
    // No prototype: a parameter named __proto__ is an own key like any other (and refused as undeclared).
    const params: Record<string, unknown> = Object.create(null) as Record<string, unknown>
    for (const [name, values] of Object.entries(c.req.queries())) {
      if (name === 'format' || name === 'draft') continue
      params[name] = values.length === 1 ? values[0] : values
    }
    const out = await lenses.render(principalOf(c), c.req.valid('param').id, {
      format,
      params,
      draft: draft === 'true' || draft === '1',
    })
    const headers: Record<string, string> = {
      'Content-Type': out.contentType,
      'Cache-Control': 'no-store',
      'X-Lens-Version': out.version === null ? 'draft' : String(out.version),
    }
    if (out.format === 'html') headers['Content-Security-Policy'] = renderedHtmlPolicy
    else headers['Content-Disposition'] = `inline; filename="${out.filename}"`
    return c.body(out.body, 200, headers)
  })
  return router
}
