import {
  createRouter,
  dataEnvelope,
  defineRoute,
  errorResponses,
  principalOf,
  z,
  type Security,
} from '../../../lib/http/index.js'
import type { BlueprintsService } from '../service.js'
import { ExportQuerySchema, exportRequest } from './request.js'

const ExportResultSchema = z
  .object({
    source: z.string().openapi({ description: 'The service-blueprint-v1 document' }),
    filename: z.string().openapi({ description: '<id>.ebp.md' }),
    blueprint: z.object({ id: z.string(), name: z.string(), version: z.string() }),
    bricks: z.array(z.object({ id: z.string(), kind: z.string(), needs: z.array(z.string()) })),
    secrets: z.array(z.string()).openapi({
      description: 'The secret parameters declared for the credentials the resources hold (never their values)',
    }),
  })
  .openapi('BlueprintExport')

const exportRoute = defineRoute({
  method: 'get',
  path: '/api/v1/blueprints/export',
  operationId: 'blueprints.export',
  summary: 'A project, or part of one, as a blueprint document, read as the caller; credentials as secret parameters',
  tags: ['Blueprints'],
  permission: 'system/blueprints:read',
  request: { query: ExportQuerySchema },
  responses: {
    200: {
      description: 'The document: { data } by default; with format=md the text itself (text/markdown)',
      content: {
        'application/json': { schema: dataEnvelope(ExportResultSchema) },
        'text/markdown': { schema: z.string() },
      },
    },
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'collection_not_found',
      'payload_too_large',
    ),
  },
})

/** GET /api/v1/blueprints/export (docs/blueprints.md "Export", decision 071). */
export function blueprintExportRoutes(blueprints: BlueprintsService, security: Security) {
  const router = createRouter(security)
  router.openapi(exportRoute, async (c) => {
    const query = c.req.valid('query')
    const result = await blueprints.export(principalOf(c), exportRequest(query))
    if (query.format === 'md')
      return c.body(result.source, 200, {
        'Content-Type': 'text/markdown; charset=utf-8',
        'Content-Disposition': `attachment; filename="${result.filename}"`,
        'Cache-Control': 'no-store',
      })
    return c.json({ data: result }, 200)
  })
  return router
}
