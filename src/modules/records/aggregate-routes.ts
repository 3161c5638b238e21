import { AppError } from '../../lib/errors.js'
import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  queryInteger,
  z,
  type Security,
} from '../../lib/http/index.js'
import { aggregateFunctions, aggregateLimits, type AggregateFunction, type AggregateSpec } from './aggregate.js'
import type { SortKey } from './query.js'
import type { RecordsService } from './service.js'

const tags = ['Records']
const list = (max: number) =>
  z
    .string()
    .max(2000)
    .optional()
    .transform((raw) =>
      raw === undefined
        ? []
        : raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
    )
    .pipe(z.array(z.string().max(100)).max(max))

const aggregate = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/records/aggregate',
  operationId: 'records.aggregate',
  summary: 'Count, sum, avg, min, max of records, optionally grouped (access rules as list)',
  tags,
  permission: 'collections/{name}:read',
  request: {
    params: z.object({ name: z.string().min(1).max(100) }),
    query: z.object({
      filter: z
        .string()
        .max(16_384)
        .optional()
        .openapi({ description: 'JSON: object format or array (UserFilter) format, as list' }),
      groupBy: list(aggregateLimits.groupBy).openapi({
        type: 'string',
        description: `Comma-separated fields to group by (at most ${aggregateLimits.groupBy})`,
        example: 'status',
      }),
      fields: list(aggregateLimits.aggregate).openapi({
        type: 'string',
        description: 'Comma-separated fields the functions other than count apply to',
        example: 'amount',
      }),
      functions: list(aggregateFunctions.length).openapi({
        type: 'string',
        description: 'Comma-separated: count (rows), sum, avg, min, max (each over every field); default count',
        example: 'count,sum,avg',
      }),
      sortBy: z.string().max(100).optional().openapi({
        description:
          'A groupBy field or a result key (count, sum_amount, …); a leading - sorts descending. Default: the groupBy fields',
      }),
      limit: queryInteger({ min: 1, max: aggregateLimits.limit, default: 100 }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(z.record(z.string(), z.unknown())).openapi({
          description:
            'One row per group: the groupBy fields, then count, sum_<field>, avg_<field>, min_<field>, max_<field>',
        }),
        hasMore: z.boolean().openapi({ description: 'More groups follow than limit' }),
      }),
      'The groups',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'collection_not_found'),
  },
})

/** GET /api/v1/collections/{name}/records/aggregate: the records service decides access, as for list. */
export function recordAggregateRoutes(records: RecordsService, readSecurity: Security) {
  const router = createRouter(readSecurity)
  router.openapi(aggregate, async (c) => {
    const { filter, groupBy, fields, functions, sortBy, limit } = c.req.valid('query')
    const specs = specsOf(functions as AggregateFunction[], fields)
    const sort: SortKey[] = sortBy
      ? [sortBy.startsWith('-') ? { field: sortBy.slice(1), order: 'desc' } : { field: sortBy, order: 'asc' }]
      : []
    return c.json(
      await records.aggregate(principalOf(c), c.req.valid('param').name, {
        filter,
        groupBy,
        aggregate: specs,
        sort,
        limit,
      }),
      200,
    )
  })
  return router
}

/** `functions` × `fields`: count counts rows; each other function applies to every field. Throws invalid_request. */
function specsOf(functions: readonly string[], fields: readonly string[]): AggregateSpec[] {
  const chosen = functions.length > 0 ? [...new Set(functions)] : ['count']
  const specs: AggregateSpec[] = []
  for (const fn of chosen) {
    if (!(aggregateFunctions as readonly string[]).includes(fn))
      throw new AppError(
        'invalid_request',
        `functions: "${fn.slice(0, 20)}" is not one of ${aggregateFunctions.join(', ')}`,
      )
    if (fn === 'count') specs.push({ fn: 'count' })
    else if (fields.length === 0) throw new AppError('invalid_request', `functions: ${fn} needs fields`)
    else for (const field of fields) specs.push({ fn: fn as AggregateFunction, field })
  }
  return specs
}
