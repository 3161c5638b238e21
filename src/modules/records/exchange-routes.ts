import { AppError } from '../../lib/errors.js'
import { createRouter, defineRoute, errorResponses, jsonContent, principalOf, queryFlag, z, type Security } from '../../lib/http/index.js'
import type { RecordExporter } from './export.js'
import type { ImportJobs } from './import-jobs.js'
import type { RecordImporter } from './import.js'

const tags = ['Records']
const Params = z.object({ name: z.string().min(1).max(100) })
const JobParams = Params.extend({ jobId: z.string().min(1).max(64) })
const RecordSchema = z.record(z.string(), z.unknown())
const LineErrorSchema = z.object({ line: z.number().int(), code: z.string(), message: z.string(), field: z.string().optional() })
const ImportResultSchema = z
  .object({
    imported: z.number().int(),
    failed: z.number().int(),
    total: z.number().int(),
    truncated: z.boolean(),
    records: z.array(RecordSchema),
    errors: z.array(LineErrorSchema),
    staleSearchIndexes: z.array(z.string()),
  })
  .openapi('ImportResult')
const ImportJobSchema = z
  .object({
    jobId: z.string(),
    collection: z.string(),
    status: z.enum(['pending', 'complete']),
    total: z.number().int(),
    imported: z.number().int(),
    failed: z.number().int(),
    chunks: z.number().int(),
    errors: z.array(LineErrorSchema.extend({ chunk: z.number().int() })),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
    rebuildingSearchIndexes: z.array(z.string()).optional(),
  })
  .openapi('ImportJob')
const baseErrors = ['invalid_request', 'unauthorized', 'forbidden', 'collection_not_found'] as const
const ndjsonType = /^application\/x-ndjson\s*(?:;|$)/i

const exportRecords = defineRoute({
  method: 'get', path: '/api/v1/collections/{name}/records/export', operationId: 'records.export', summary: 'Download the records you may read, as CSV or JSON (streamed)', tags,
  permission: 'collections/{name}:read',
  request: {
    params: Params,
    query: z.object({
      format: z.enum(['csv', 'json']).default('csv'),
      ids: z.string().max(40_000).optional().openapi({ description: 'Comma-separated record ids (at most 500); every record when absent' }),
      locale: z.string().max(40).optional().openapi({ description: 'Translatable fields in this locale; default `*`, the whole locale map as JSON' }),
    }),
  },
  responses: {
    200: {
      description: 'The file, as an attachment (Content-Disposition)',
      content: { 'text/csv': { schema: z.string() }, 'application/json': { schema: z.array(RecordSchema) } },
    },
    ...errorResponses(...baseErrors),
  },
})
const importNdjson = defineRoute({
  method: 'post', path: '/api/v1/collections/{name}/records/import-ndjson', operationId: 'records.importNdjson', summary: 'Create up to 1000 records from NDJSON lines', tags,
  permission: 'collections/{name}:create',
  request: {
    params: Params,
    query: z.object({
      dryRun: queryFlag.optional().openapi({ description: 'Validate every line, write nothing' }),
      jobId: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .openapi({ description: 'Add this chunk to an import job of yours. The job holds each chunk once: the same body sent again is answered as the first time' }),
      locale: z.string().max(40).optional(),
    }),
    body: { required: true, content: { 'application/x-ndjson': { schema: z.string().openapi({ description: 'One JSON object per line' }) } } },
  },
  responses: {
    200: {
      ...jsonContent(ImportResultSchema, 'What was stored, and each refused line'),
      headers: z.object({
        'Idempotent-Replayed': z.literal('true').optional().openapi({ description: 'The job held this chunk already (the same body sent again): its first outcome, nothing written now' }),
      }),
    },
    ...errorResponses(...baseErrors, 'not_found', 'conflict', 'payload_too_large', 'unsupported_media_type'),
  },
})
const createJob = defineRoute({
  method: 'post', path: '/api/v1/collections/{name}/records/import-jobs', operationId: 'records.createImportJob', summary: 'Start an import job (chunks then go to import-ndjson?jobId=)', tags,
  permission: 'collections/{name}:create',
  request: {
    params: Params,
    body: {
      required: false,
      content: { 'application/json': { schema: z.object({ total: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: 'Expected records, for progress only' }) }) } },
    },
  },
  responses: { 201: jsonContent(ImportJobSchema, 'The job, pending'), ...errorResponses(...baseErrors) },
})
const getJob = defineRoute({
  method: 'get', path: '/api/v1/collections/{name}/records/import-jobs/{jobId}', operationId: 'records.getImportJob', summary: 'An import job of yours: status and tallies', tags,
  permission: 'collections/{name}:create',
  request: { params: JobParams },
  responses: { 200: jsonContent(ImportJobSchema, 'The job'), ...errorResponses(...baseErrors, 'not_found') },
})
const finalizeJob = defineRoute({
  method: 'post', path: '/api/v1/collections/{name}/records/import-jobs/{jobId}/finalize', operationId: 'records.finalizeImportJob', summary: 'Finish an import job: status complete, final tallies', tags,
  permission: 'collections/{name}:create',
  request: { params: JobParams, query: z.object({ rebuild: queryFlag.optional() }) },
  responses: { 200: jsonContent(ImportJobSchema, 'The job, complete'), ...errorResponses(...baseErrors, 'not_found') },
})

/**
 * Export, NDJSON import and import jobs under /api/v1/collections/{name}/records (`export` and `import-jobs`
 * are never taken for record ids: static segments go before parameters, http/route-order.ts). The guard resolves the caller;
 * the services decide, as for every records route.
 */
export function recordExchangeRoutes(deps: { exporter: RecordExporter; importer: RecordImporter; jobs: ImportJobs }, readSecurity: Security) {
  const router = createRouter(readSecurity)
  router.openapi(exportRecords, async (c) => {
    const file = await deps.exporter.run(principalOf(c), c.req.valid('param').name, c.req.valid('query'))
    return c.body(file.body, 200, {
      'Content-Type': file.contentType,
      'Content-Disposition': `attachment; filename="${file.filename}"`,
      'Cache-Control': 'no-store',
    })
  })
  router.openapi(importNdjson, async (c) => {
    if (!ndjsonType.test(c.req.header('content-type') ?? '')) {
      throw new AppError('unsupported_media_type', 'Send Content-Type: application/x-ndjson, one JSON object per line')
    }
    const { dryRun, jobId, locale } = c.req.valid('query')
    const { replayed, ...result } = await deps.importer.run(principalOf(c), c.req.valid('param').name, await c.req.text(), { dryRun: dryRun ?? false, jobId, locale })
    // A chunk the job held already: its first outcome, as payment APIs mark a replayed idempotent request.
    if (replayed) c.header('Idempotent-Replayed', 'true')
    return c.json(result, 200)
  })
  router.openapi(createJob, async (c) => {
    const { total } = c.req.valid('json')
    return c.json(await deps.jobs.create(principalOf(c), c.req.valid('param').name, total ?? 0), 201)
  })
  router.openapi(getJob, async (c) => {
    const { name, jobId } = c.req.valid('param')
    return c.json(await deps.jobs.get(principalOf(c), name, jobId), 200)
  })
  router.openapi(finalizeJob, async (c) => {
    const { name, jobId } = c.req.valid('param')
    return c.json(await deps.jobs.finalize(principalOf(c), name, jobId, c.req.valid('query').rebuild ?? false), 200)
  })
  return router
}
