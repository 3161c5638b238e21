import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../lib/http/index.js'
import type { RecordsService } from './service.js'

const ShapeAdviceSchema = z
  .object({
    shape: z.object({
      filter: z.array(z.object({ field: z.string(), op: z.string() })).openapi({
        description:
          'The top-level conditions (the row rule of the grants and the filter): field and operator, never a value',
      }),
      sortBy: z.string().openapi({ example: '-views' }),
      search: z.boolean(),
    }),
    choice: z.enum(['walk', 'search', 'planner']).openapi({
      description:
        "How the page was read: walk the sort's index testing the filter, search the filter's index then sort, or as the database's planner chose (decision 082)",
    }),
    plan: z
      .string()
      .nullable()
      .openapi({ description: "The database's plan, taken the first time the shape was seen" }),
    slow: z
      .boolean()
      .openapi({ description: 'Sorts what it found, scans the table, or reads far more rows than it returns' }),
    seen: z.number().int(),
    meanMs: z.number().openapi({ description: "Mean time of the page's statement, milliseconds" }),
    estimate: z
      .object({ rows: z.number(), walk: z.number(), search: z.number() })
      .nullable()
      .openapi({ description: 'Rows each plan was expected to read (SQLite); null where the planner chose alone' }),
    index: z
      .object({ fields: z.array(z.string()) })
      .nullable()
      .openapi({
        description:
          "For a slow shape: the compound index that would serve it; add it to the collection's indexes with PATCH",
      }),
    firstSeen: z.number().int(),
    lastSeen: z.number().int(),
  })
  .openapi('IndexAdvice')

const indexAdvice = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/index-advice',
  operationId: 'collections.indexAdvice',
  summary:
    "The shapes of the collection's lists since this instance started, and the compound index that would serve each slow one",
  tags: ['Collections'],
  permission: 'schema/*:update',
  request: { params: z.object({ name: z.string().min(1).max(100) }) },
  responses: {
    200: jsonContent(z.object({ data: z.array(ShapeAdviceSchema) }), 'Shapes, the slow first'),
    ...errorResponses('unauthorized', 'forbidden', 'collection_not_found'),
  },
})

/** GET /api/v1/collections/{name}/index-advice (the records service checks schema/*:update itself). */
export function recordAdviceRoutes(records: RecordsService, security: Security) {
  const router = createRouter(security)
  router.openapi(indexAdvice, async (c) =>
    c.json({ data: await records.indexAdvice(principalOf(c), c.req.valid('param').name) }, 200),
  )
  return router
}
