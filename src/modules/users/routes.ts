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
import { displayName, email, password, username, UserSchema } from './schemas.js'
import type { UsersService } from './service.js'

const tags = ['Users']
const IdParams = z.object({ id: z.string().min(1).max(64) })

const listUsers = defineRoute({
  method: 'get',
  path: '/api/v1/users',
  operationId: 'users.list',
  summary: 'Users of the project (no password material, ever)',
  tags,
  permission: 'system/users:read',
  request: {
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(UserSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of users',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const createUser = defineRoute({
  method: 'post',
  path: '/api/v1/users',
  operationId: 'users.create',
  summary: 'Create an account',
  tags,
  permission: 'system/users:create',
  request: jsonBody(
    z.object({
      email: email.optional(),
      password,
      name: displayName.default(''),
      role: z.string().min(1).max(50),
      username: username.optional(),
    }),
  ),
  responses: {
    201: jsonContent(z.object({ data: UserSchema }), 'Created'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'already_exists'),
  },
})
const getUser = defineRoute({
  method: 'get',
  path: '/api/v1/users/{id}',
  operationId: 'users.get',
  summary: 'One user',
  tags,
  permission: 'system/users:read',
  request: { params: IdParams },
  responses: {
    200: jsonContent(z.object({ data: UserSchema }), 'The user'),
    ...errorResponses('unauthorized', 'forbidden', 'not_found'),
  },
})
const updateUser = defineRoute({
  method: 'patch',
  path: '/api/v1/users/{id}',
  operationId: 'users.update',
  summary: 'Change name, role, ban or password (applies on the next request)',
  tags,
  permission: 'system/users:update',
  request: {
    params: IdParams,
    ...jsonBody(
      z.object({
        name: displayName.optional(),
        role: z.string().min(1).max(50).optional(),
        banned: z.boolean().optional(),
        password: password.optional(),
      }),
    ),
  },
  responses: {
    200: jsonContent(z.object({ data: UserSchema }), 'Updated'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const deleteUser = defineRoute({
  method: 'delete',
  path: '/api/v1/users/{id}',
  operationId: 'users.delete',
  summary: 'Delete an account, its sessions and its keys',
  tags,
  permission: 'system/users:delete',
  request: { params: IdParams },
  responses: {
    200: jsonContent(z.object({ success: z.literal(true) }), 'Deleted'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})

/** /api/v1/users (addendum §3). */
export function usersRoutes(users: UsersService, security: Security) {
  const router = createRouter(security)
  router.openapi(listUsers, async (c) => {
    const { page, limit } = c.req.valid('query')
    const { data, total } = await users.list(principalOf(c), page, limit)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(createUser, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await users.create(p, c.req.valid('json')) }, 201)
  })
  router.openapi(getUser, async (c) => c.json({ data: await users.get(principalOf(c), c.req.valid('param').id) }, 200))
  router.openapi(updateUser, async (c) => {
    const p = principalOf(c)
    const { user } = await users.update(p, c.req.valid('param').id, c.req.valid('json'))
    return c.json({ data: user }, 200)
  })
  router.openapi(deleteUser, async (c) => {
    const p = principalOf(c)
    await users.delete(p, c.req.valid('param').id)
    return c.json({ success: true as const }, 200)
  })
  return router
}
