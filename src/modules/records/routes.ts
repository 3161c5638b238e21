import type { Context } from 'hono'
import { AppError } from '../../lib/errors.js'
import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  queryFlag,
  queryInteger,
  z,
  type AppEnv,
  type Security,
} from '../../lib/http/index.js'
import type { RecordsService } from './service.js'
import type { VersionCheck } from './write.js'

const tags = ['Records']
const RecordSchema = z.record(z.string(), z.unknown()).openapi('Record', {
  example: { id: '3f2a…', created_at: 1790000000, updated_at: 1790000000, _version: 1, title: 'Hello' },
})
const Params = z.object({ name: z.string().min(1).max(100) })
const IdParams = Params.extend({ id: z.string().min(1).max(64) })
const Body = z.record(z.string(), z.unknown())
const readErrors = ['invalid_request', 'unauthorized', 'forbidden', 'collection_not_found'] as const

// Weak ETags on reads (decision 025): the client sends back the tags it holds; a current one is answered 304.
const ConditionalHeaders = z.object({
  'if-none-match': z
    .string()
    .max(2000)
    .optional()
    .openapi({ description: 'ETags held (W/"…", comma-separated) or *: 304 when the answer has not changed' }),
})
const notModified = {
  description: 'Not modified: the ETag in If-None-Match is current (no body)',
  headers: { ETag: { schema: { type: 'string' as const } } },
}

const ListQuery = z.object({
  page: queryInteger({ min: 1, default: 1 }),
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  sortBy: z.string().max(100).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  filter: z
    .string()
    .max(16_384)
    .optional()
    .openapi({ description: 'JSON: object format or array (UserFilter) format' }),
  search: z.string().max(500).optional(),
  expand: z.string().max(500).optional(),
  fields: z.string().max(2000).optional(),
  locale: z.string().max(40).optional(),
  cursor: z.string().max(2048).optional().openapi({ description: 'Keyset mode; send it empty for the first page' }),
  include_deleted: queryFlag.optional(),
  path: z.string().max(200).optional(),
})

const list = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/records',
  operationId: 'records.list',
  summary: 'List records: filter, search, sort, expand, page or cursor',
  tags,
  permission: 'collections/{name}:read',
  request: { params: Params, query: ListQuery, headers: ConditionalHeaders },
  responses: {
    304: notModified,
    200: jsonContent(
      z.object({
        data: z.array(RecordSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
        cursors: z.object({ next: z.string().nullable(), previous: z.string().nullable() }).optional(),
      }),
      'A page of records',
    ),
    ...errorResponses(...readErrors),
  },
})
const getOne = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/records/{id}',
  operationId: 'records.get',
  summary: 'One record',
  tags,
  permission: 'collections/{name}:read',
  request: {
    params: IdParams,
    query: z.object({
      expand: z.string().max(500).optional(),
      fields: z.string().max(2000).optional(),
      locale: z.string().max(40).optional(),
      include_deleted: queryFlag.optional(),
      meta: z.enum(['i18n']).optional(),
    }),
    headers: ConditionalHeaders,
  },
  responses: {
    304: notModified,
    200: jsonContent(z.object({ data: RecordSchema, meta: z.unknown().optional() }), 'The record'),
    ...errorResponses(...readErrors, 'record_not_found'),
  },
})
const create = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/records',
  operationId: 'records.create',
  summary: 'Create a record (answers the bare record)',
  tags,
  permission: 'collections/{name}:create',
  request: { params: Params, query: z.object({ locale: z.string().max(40).optional() }), ...jsonBody(Body) },
  responses: {
    201: jsonContent(RecordSchema, 'Created'),
    ...errorResponses(...readErrors, 'missing_field', 'invalid_field', 'validation_error', 'already_exists'),
  },
})
const update = defineRoute({
  method: 'patch',
  path: '/api/v1/collections/{name}/records/{id}',
  operationId: 'records.update',
  summary: 'Update fields or JSON paths ($set, $push, $pull, $unset); optional version check',
  tags,
  permission: 'collections/{name}:update',
  request: {
    params: IdParams,
    query: z.object({ version: queryInteger({ min: 0 }).optional(), locale: z.string().max(40).optional() }),
    headers: z.object({ 'if-match': z.string().max(100).optional() }),
    ...jsonBody(Body),
  },
  responses: {
    200: jsonContent(RecordSchema, 'The whole updated record'),
    ...errorResponses(
      ...readErrors,
      'record_not_found',
      'invalid_field',
      'validation_error',
      'conflict',
      'precondition_failed',
      'already_exists',
    ),
  },
})
const remove = defineRoute({
  method: 'delete',
  path: '/api/v1/collections/{name}/records/{id}',
  operationId: 'records.delete',
  summary: 'Delete a record (soft by default)',
  tags,
  permission: 'collections/{name}:delete',
  request: { params: IdParams, query: z.object({ permanent: queryFlag.optional() }) },
  responses: {
    200: jsonContent(z.object({ success: z.literal(true), permanent: z.boolean() }), 'Deleted'),
    ...errorResponses(...readErrors, 'record_not_found', 'conflict'),
  },
})
const restore = defineRoute({
  method: 'post',
  path: '/api/v1/collections/{name}/records/{id}/restore',
  operationId: 'records.restore',
  summary: 'Restore a soft-deleted record',
  tags,
  permission: 'collections/{name}:delete',
  request: { params: IdParams },
  responses: {
    200: jsonContent(z.object({ success: z.literal(true) }), 'Restored'),
    ...errorResponses(...readErrors, 'record_not_found'),
  },
})

/** `"3"`, `W/"3"` or `3` → 3. Throws invalid_request. */
function parseIfMatch(value: string): number {
  const match = /^(?:W\/)?"?(\d{1,15})"?$/.exec(value.trim())
  if (!match) throw new AppError('invalid_request', 'If-Match must carry a record version (_version)')
  return Number(match[1])
}

/**
 * The version the client holds. Each channel given (If-Match, ?version, body _version) is honoured: when
 * they disagree the request is refused (400 invalid_request) before anything is read or written; when they
 * agree it is one check, answered 412 precondition_failed on a mismatch when If-Match was among them,
 * else 409 conflict. Throws invalid_request.
 */
function versionCheck(
  ifMatch: string | undefined,
  query: number | undefined,
  body: Record<string, unknown>,
): VersionCheck {
  const given: [channel: string, version: number][] = []
  if (ifMatch !== undefined) given.push(['If-Match', parseIfMatch(ifMatch)])
  if (query !== undefined) given.push(['version', query])
  const inBody = body._version
  if (inBody !== undefined && inBody !== null) {
    if (typeof inBody !== 'number' || !Number.isSafeInteger(inBody) || inBody < 0)
      throw new AppError('invalid_request', '_version must be a whole number')
    given.push(['_version', inBody])
  }
  const [first] = given
  if (!first) return null
  if (given.some(([, version]) => version !== first[1])) {
    throw new AppError(
      'invalid_request',
      `The versions sent disagree (${given.map(([channel, version]) => `${channel} ${version}`).join(', ')}); send one`,
      {
        versions: Object.fromEntries(given),
      },
    )
  }
  return { version: first[1], onMismatch: ifMatch !== undefined ? 'precondition_failed' : 'conflict' }
}

/**
 * A read's ETag; `private, no-cache`: the answer depends on who asks, and a copy is used only once revalidated.
 * Set on Node's response, as the transport sets its own headers (transport.ts): `c.header` would give the
 * answer a WHATWG Headers object, which costs more to build and to copy out than the tag does to compute.
 */
function tagged(c: Context<AppEnv>, etag: string | null): void {
  if (etag === null) return
  const outgoing = c.env?.outgoing
  if (outgoing) {
    outgoing.setHeader('ETag', etag)
    outgoing.setHeader('Cache-Control', 'private, no-cache')
  } else {
    c.header('ETag', etag)
    c.header('Cache-Control', 'private, no-cache')
  }
}

/**
 * /api/v1/collections/{name}/records. The guard resolves the caller; the records service decides, since
 * presets (a public collection needs no grant), shares and row scopes depend on the collection.
 */
export function recordsRoutes(records: RecordsService, readSecurity: Security) {
  const router = createRouter(readSecurity)
  router.openapi(list, async (c) => {
    const { include_deleted, ...query } = c.req.valid('query')
    const known = c.req.valid('header')['if-none-match']
    const { etag, body } = await records.listConditional(
      principalOf(c),
      c.req.valid('param').name,
      { ...query, includeDeleted: include_deleted },
      known,
    )
    const answer = body === null ? c.body(null, 304) : c.json(body, 200)
    tagged(c, etag) // once the body is serialised: an answer that fails on the way out carries no tag
    return answer
  })
  router.openapi(getOne, async (c) => {
    const { name, id } = c.req.valid('param')
    const { include_deleted, ...query } = c.req.valid('query')
    const known = c.req.valid('header')['if-none-match']
    const { etag, body } = await records.getConditional(
      principalOf(c),
      name,
      id,
      { ...query, includeDeleted: include_deleted },
      known,
    )
    const answer = body === null ? c.body(null, 304) : c.json(body, 200)
    tagged(c, etag) // once the body is serialised: an answer that fails on the way out carries no tag
    return answer
  })
  router.openapi(create, async (c) => {
    const record = await records.create(
      principalOf(c),
      c.req.valid('param').name,
      c.req.valid('json'),
      c.req.valid('query').locale,
    )
    return c.json(record, 201)
  })
  router.openapi(update, async (c) => {
    const { name, id } = c.req.valid('param')
    const { version, locale } = c.req.valid('query')
    const body = c.req.valid('json')
    const check = versionCheck(c.req.valid('header')['if-match'], version, body)
    return c.json(await records.update(principalOf(c), name, id, body, check, locale), 200)
  })
  router.openapi(remove, async (c) => {
    const { name, id } = c.req.valid('param')
    const permanent = c.req.valid('query').permanent ?? false
    await records.delete(principalOf(c), name, id, permanent)
    return c.json({ success: true as const, permanent }, 200)
  })
  router.openapi(restore, async (c) => {
    const { name, id } = c.req.valid('param')
    await records.restore(principalOf(c), name, id)
    return c.json({ success: true as const }, 200)
  })
  return router
}
