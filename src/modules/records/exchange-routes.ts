import { AppError } from '../../lib/errors.js'
import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  queryFlag,
  z,
  type Security,
} from '../../lib/http/index.js'
import type { RecordExporter } from './export.js'
import { geoFormats, type GeoFormat, type GeoImporter, type GeoMapping } from './geo-import.js'
import type { ImportJobs } from './import-jobs.js'
import type { RecordImporter } from './import.js'

const tags = ['Records']
const Params = z.object({ name: z.string().min(1).max(100) })
const JobParams = Params.extend({ jobId: z.string().min(1).max(64) })
const RecordSchema = z.record(z.string(), z.unknown())
const LineErrorSchema = z.object({
  line: z.number().int(),
  feature: z.number().int().optional().openapi({
    description: 'Geospatial imports of GeoJSON, KML or GPX: the 0-based feature (line is its 1-based number)',
  }),
  code: z.string(),
  message: z.string(),
  field: z.string().optional(),
})
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
const GeoImportResultSchema = ImportResultSchema.extend({
  unknownProperties: z
    .array(z.object({ line: z.number().int(), feature: z.number().int().optional(), properties: z.array(z.string()) }))
    .openapi({ description: 'Per row: the properties that name no field (after mapping), left out of the record' }),
}).openapi('GeoImportResult')
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
/** The geospatial importer's formats by Content-Type (the `format` query parameter wins). */
const geoTypes: Readonly<Record<string, GeoFormat>> = {
  'application/geo+json': 'geojson',
  'application/json': 'geojson',
  'text/csv': 'csv',
  'application/vnd.google-earth.kml+xml': 'kml',
  'application/gpx+xml': 'gpx',
}
const importOptions = {
  dryRun: queryFlag.optional().openapi({ description: 'Validate every line, write nothing' }),
  jobId: z.string().min(1).max(64).optional().openapi({
    description:
      'Add this chunk to an import job of yours. The job holds each chunk once: the same body sent again is answered as the first time',
  }),
  locale: z.string().max(40).optional(),
}
/** `mapping`: a JSON object from property to field name (null: leave the property out, unreported). */
const mappingParam = z
  .string()
  .max(10_000)
  .transform((text, ctx): GeoMapping => {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      value = undefined
    }
    const entries = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : null
    if (
      !entries ||
      !entries.every(
        ([, field]) => field === null || (typeof field === 'string' && field.length > 0 && field.length <= 100),
      )
    ) {
      ctx.addIssue({
        code: 'custom',
        message: 'mapping must be a JSON object from property name to field name (or null), e.g. {"NAME":"title"}',
      })
      return z.NEVER
    }
    return Object.fromEntries(entries) as GeoMapping
  })
const column = z.string().min(1).max(200)

const exportRecords = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/records/export',
  operationId: 'records.export',
  summary: 'Download the records you may read, as CSV or JSON (streamed)',
  tags,
  permission: 'collections/{name}:read',
  request: {
    params: Params,
    query: z.object({
      format: z.enum(['csv', 'json']).default('csv'),
      ids: z
        .string()
        .max(40_000)
        .optional()
        .openapi({ description: 'Comma-separated record ids (at most 500); every record when absent' }),
      locale: z
        .string()
        .max(40)
        .optional()
        .openapi({ description: 'Translatable fields in this locale; default `*`, the whole locale map as JSON' }),
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
  method: 'post',
  path: '/api/v1/collections/{name}/records/import-ndjson',
  operationId: 'records.importNdjson',
  summary: 'Create up to 1000 records from NDJSON lines',
  tags,
  permission: 'collections/{name}:create',
  request: {
    params: Params,
    query: z.object(importOptions),
    body: {
      required: true,
      content: { 'application/x-ndjson': { schema: z.string().openapi({ description: 'One JSON object per line' }) } },
    },
  },
  responses: {
    200: {
      ...jsonContent(ImportResultSchema, 'What was stored, and each refused line'),
      headers: z.object({
        'Idempotent-Replayed': z.literal('true').optional().openapi({
          description:
            'The job held this chunk already (the same body sent again): its first outcome, nothing written now',
        }),
      }),
    },
    ...errorResponses(...baseErrors, 'not_found', 'conflict', 'payload_too_large', 'unsupported_media_type'),
  },
})
const importGeo = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/records/import',
  operationId: 'records.importGeo',
  summary: 'Create up to 1000 records from CSV rows, or from GeoJSON, CSV (WKT or lat/lon), KML or GPX features',
  tags,
  permission: 'collections/{name}:create',
  request: {
    params: Params,
    query: z.object({
      format: z.enum(geoFormats).optional().openapi({ description: "The body's format; wins over Content-Type" }),
      geometryField: z
        .string()
        .min(1)
        .max(100)
        .optional()
        .openapi({ description: "The geo field the geometries go to; default: the collection's only geo field" }),
      mapping: mappingParam.optional().openapi({
        type: 'string',
        description:
          'JSON object from property to field name, e.g. {"NAME":"title","junk":null} (null: leave out, unreported)',
      }),
      wkt: column.optional().openapi({ description: 'CSV: the WKT column (default: a column named wkt or geometry)' }),
      lat: column.optional().openapi({ description: 'CSV: the latitude column (default: lat or latitude)' }),
      lon: column.optional().openapi({ description: 'CSV: the longitude column (default: lon, lng or longitude)' }),
      delimiter: z
        .string()
        .length(1)
        .refine((d) => !['"', '\n', '\r'].includes(d), 'delimiter may not be a quote or a line break')
        .optional()
        .openapi({
          description: 'CSV: one character (tab: %09); default: guessed from the header row among , ; tab |',
        }),
      ...importOptions,
    }),
    body: {
      required: true,
      // Plain schema objects, not zod: the body is read by the format's parser, not as the route's JSON.
      content: {
        'application/geo+json': { schema: { type: 'object', description: 'A FeatureCollection or a Feature' } },
        'application/json': { schema: { type: 'object', description: 'GeoJSON, as application/geo+json' } },
        'text/csv': {
          schema: {
            type: 'string',
            description:
              'A header row, then one record per row (columns name fields), or one feature per row when the query names a geometry or the collection has a geo field no column names',
          },
        },
        'application/vnd.google-earth.kml+xml': {
          schema: { type: 'string', description: 'KML: each Placemark a feature' },
        },
        'application/gpx+xml': {
          schema: { type: 'string', description: 'GPX: each waypoint, route and track a feature' },
        },
      },
    },
  },
  responses: {
    200: {
      ...jsonContent(GeoImportResultSchema, 'What was stored, each refused row, and the properties left out'),
      headers: z.object({
        'Idempotent-Replayed': z.literal('true').optional().openapi({
          description:
            'The job held this chunk already (the same body sent again): its first outcome, nothing written now',
        }),
      }),
    },
    ...errorResponses(
      ...baseErrors,
      'not_found',
      'conflict',
      'payload_too_large',
      'unsupported_media_type',
      'validation_error',
    ),
  },
})
const createJob = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/records/import-jobs',
  operationId: 'records.createImportJob',
  summary: 'Start an import job (chunks then go to import-ndjson?jobId=)',
  tags,
  permission: 'collections/{name}:create',
  request: {
    params: Params,
    body: {
      required: false,
      content: {
        'application/json': {
          schema: z.object({
            total: z
              .number()
              .int()
              .min(0)
              .max(Number.MAX_SAFE_INTEGER)
              .optional()
              .openapi({ description: 'Expected records, for progress only' }),
          }),
        },
      },
    },
  },
  responses: { 201: jsonContent(ImportJobSchema, 'The job, pending'), ...errorResponses(...baseErrors) },
})
const getJob = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/records/import-jobs/{jobId}',
  operationId: 'records.getImportJob',
  summary: 'An import job of yours: status and tallies',
  tags,
  permission: 'collections/{name}:create',
  request: { params: JobParams },
  responses: { 200: jsonContent(ImportJobSchema, 'The job'), ...errorResponses(...baseErrors, 'not_found') },
})
const finalizeJob = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/records/import-jobs/{jobId}/finalize',
  operationId: 'records.finalizeImportJob',
  summary: 'Finish an import job: status complete, final tallies',
  tags,
  permission: 'collections/{name}:create',
  request: { params: JobParams, query: z.object({ rebuild: queryFlag.optional() }) },
  responses: { 200: jsonContent(ImportJobSchema, 'The job, complete'), ...errorResponses(...baseErrors, 'not_found') },
})

/**
 * Export, NDJSON import and import jobs under /api/v1/collections/{name}/records (`export` and `import-jobs`
 * are never taken for record ids: static segments go before parameters, http/route-order.ts). The guard resolves the caller;
 * the services decide, as for every records route.
 */
export function recordExchangeRoutes(
  deps: { exporter: RecordExporter; importer: RecordImporter; geoImporter: GeoImporter; jobs: ImportJobs },
  readSecurity: Security,
) {
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
    const { replayed, ...result } = await deps.importer.run(
      principalOf(c),
      c.req.valid('param').name,
      await c.req.text(),
      { dryRun: dryRun ?? false, jobId, locale },
    )
    // A chunk the job held already: its first outcome, as payment APIs mark a replayed idempotent request.
    if (replayed) c.header('Idempotent-Replayed', 'true')
    return c.json(result, 200)
  })
  router.openapi(importGeo, async (c) => {
    const { format, geometryField, mapping, wkt, lat, lon, delimiter, dryRun, jobId, locale } = c.req.valid('query')
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    const chosen = format ?? geoTypes[type]
    if (!chosen)
      throw new AppError(
        'unsupported_media_type',
        `Send GeoJSON (application/geo+json), CSV (text/csv), KML (application/vnd.google-earth.kml+xml) or GPX (application/gpx+xml), or name the format with ?format=`,
      )
    const csv = {
      ...(wkt === undefined ? {} : { wkt }),
      ...(lat === undefined ? {} : { lat }),
      ...(lon === undefined ? {} : { lon }),
      ...(delimiter === undefined ? {} : { delimiter }),
    }
    const options = { format: chosen, geometryField, mapping, csv, dryRun: dryRun ?? false, jobId, locale }
    const { replayed, ...result } = await deps.geoImporter.run(
      principalOf(c),
      c.req.valid('param').name,
      await c.req.text(),
      options,
    )
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
