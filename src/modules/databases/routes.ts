import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  queryFlag,
  z,
  type Security,
} from '../../lib/http/index.js'
import type { DatabasesService } from './service.js'

const DatabaseSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(['sqlite', 'postgres']),
    location: z.string().nullable().openapi({ description: 'Server and database, never the credentials' }),
    createdAt: z.number().int(),
  })
  .openapi('Database')

const tags = ['Databases']

const listDatabases = defineRoute({
  method: 'get',
  path: '/api/v1/databases',
  operationId: 'databases.list',
  summary: 'Registered database bindings of the project',
  tags,
  permission: 'system/databases:read',
  responses: {
    200: jsonContent(z.object({ data: z.array(DatabaseSchema) }), 'Bindings'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const createDatabase = defineRoute({
  method: 'post',
  path: '/api/v1/databases',
  operationId: 'databases.create',
  summary: 'Register a database for remote collections',
  tags,
  permission: 'system/databases:manage',
  request: jsonBody(
    z.object({
      name: z.string().regex(/^[a-z][a-z0-9_-]{0,49}$/, 'must be 1-50 lower-case letters, digits, - or _'),
      kind: z.enum(['sqlite', 'postgres']),
      url: z
        .string()
        .max(2000)
        .regex(/^postgres(ql)?:\/\//, 'must start with postgres://')
        .optional(),
    }),
  ),
  responses: {
    201: jsonContent(z.object({ data: DatabaseSchema }), 'Registered'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'already_exists'),
  },
})

const deleteDatabase = defineRoute({
  method: 'delete',
  path: '/api/v1/databases/{id}',
  operationId: 'databases.delete',
  summary: 'Unregister a database; cascade removes its collections from the registry',
  tags,
  permission: 'system/databases:manage',
  request: {
    params: z.object({ id: z.string().min(1).max(64) }),
    query: z.object({
      cascade: queryFlag.optional().openapi({
        description: 'Also remove the collections attached to it (default false: refused with 409 while there are any)',
      }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        success: z.literal(true),
        cleanupLog: z.array(z.string()),
        manualCleanupRequired: z
          .boolean()
          .openapi({ description: 'Tables were left in a database Plinth does not own' }),
      }),
      'Deleted',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict'),
  },
})

/** GET, POST and DELETE /api/v1/databases. */
export function databasesRoutes(databases: DatabasesService, security: Security) {
  const router = createRouter(security)
  router.openapi(listDatabases, async (c) => c.json({ data: await databases.list(principalOf(c)) }, 200))
  router.openapi(createDatabase, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await databases.create(p, c.req.valid('json')) }, 201)
  })
  router.openapi(deleteDatabase, async (c) => {
    const p = principalOf(c)
    return c.json(await databases.delete(p, c.req.valid('param').id, c.req.valid('query').cascade ?? false), 200)
  })
  return router
}
