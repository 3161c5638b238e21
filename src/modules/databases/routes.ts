import { createRouter, defineRoute, errorResponses, jsonBody, jsonContent, principalOf, z, type Security } from '../../lib/http/index.js'
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
  method: 'get', path: '/api/v1/databases', operationId: 'databases.list', summary: 'Registered database bindings of the project', tags,
  permission: 'system/databases:read',
  responses: { 200: jsonContent(z.object({ data: z.array(DatabaseSchema) }), 'Bindings'), ...errorResponses('unauthorized', 'forbidden') },
})
const createDatabase = defineRoute({
  method: 'post', path: '/api/v1/databases', operationId: 'databases.create', summary: 'Register a database for remote collections', tags,
  permission: 'system/databases:manage',
  request: jsonBody(
    z.object({
      name: z.string().regex(/^[a-z][a-z0-9_-]{0,49}$/, 'must be 1-50 lower-case letters, digits, - or _'),
      kind: z.enum(['sqlite', 'postgres']),
      url: z.string().max(2000).regex(/^postgres(ql)?:\/\//, 'must start with postgres://').optional(),
    }),
  ),
  responses: { 201: jsonContent(z.object({ data: DatabaseSchema }), 'Registered'), ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'already_exists') },
})

/** GET and POST /api/v1/databases (DELETE comes with the data tools). */
export function databasesRoutes(databases: DatabasesService, security: Security) {
  const router = createRouter(security)
  router.openapi(listDatabases, async (c) => c.json({ data: await databases.list(principalOf(c).projectId) }, 200))
  router.openapi(createDatabase, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await databases.create(p, p.projectId, c.req.valid('json')) }, 201)
  })
  return router
}
