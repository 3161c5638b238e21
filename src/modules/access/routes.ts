import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../lib/http/index.js'
import {
  CreateRoleSchema,
  GrantSchema,
  ReplaceGrantsSchema,
  RoleIdParams,
  RoleSchema,
  UpdateRoleSchema,
} from './schemas.js'
import type { AccessService } from './service.js'

const tags = ['Roles']

const listRoles = defineRoute({
  method: 'get',
  path: '/api/v1/roles',
  operationId: 'roles.list',
  summary: "List the project's roles",
  tags,
  permission: 'system/roles:read',
  responses: {
    200: jsonContent(z.object({ data: z.array(RoleSchema) }), 'Roles'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const createRole = defineRoute({
  method: 'post',
  path: '/api/v1/roles',
  operationId: 'roles.create',
  summary: 'Create a custom role',
  tags,
  permission: 'system/roles:create',
  request: jsonBody(CreateRoleSchema),
  responses: {
    201: jsonContent(z.object({ data: RoleSchema }), 'Created'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'already_exists'),
  },
})
const updateRole = defineRoute({
  method: 'patch',
  path: '/api/v1/roles/{id}',
  operationId: 'roles.update',
  summary: 'Rename, describe or change admin access',
  tags,
  permission: 'system/roles:update',
  request: { params: RoleIdParams, ...jsonBody(UpdateRoleSchema) },
  responses: {
    200: jsonContent(z.object({ data: RoleSchema }), 'Updated'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'already_exists'),
  },
})
const deleteRole = defineRoute({
  method: 'delete',
  path: '/api/v1/roles/{id}',
  operationId: 'roles.delete',
  summary: 'Delete a custom role',
  tags,
  permission: 'system/roles:delete',
  request: { params: RoleIdParams },
  responses: {
    200: jsonContent(z.object({ success: z.literal(true) }), 'Deleted'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict'),
  },
})
const listGrants = defineRoute({
  method: 'get',
  path: '/api/v1/roles/{id}/grants',
  operationId: 'roles.grants',
  summary: "A role's grants",
  tags,
  permission: 'system/roles:read',
  request: { params: RoleIdParams },
  responses: {
    200: jsonContent(z.object({ data: z.array(GrantSchema) }), 'Grants'),
    ...errorResponses('unauthorized', 'forbidden', 'not_found'),
  },
})
const replaceGrants = defineRoute({
  method: 'put',
  path: '/api/v1/roles/{id}/grants',
  operationId: 'roles.replaceGrants',
  summary: "Replace a role's grants",
  tags,
  permission: 'system/roles:update',
  request: { params: RoleIdParams, ...jsonBody(ReplaceGrantsSchema) },
  responses: {
    200: jsonContent(z.object({ data: z.array(GrantSchema) }), 'The grants now in force'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'validation_error'),
  },
})

/** /api/v1/roles and their grants (addendum §3). */
export function accessRoutes(access: AccessService, security: Security) {
  const router = createRouter(security)
  router.openapi(listRoles, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await access.listRoles(p) }, 200)
  })
  router.openapi(createRole, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await access.createRole(p, c.req.valid('json')) }, 201)
  })
  router.openapi(updateRole, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await access.updateRole(p, c.req.valid('param').id, c.req.valid('json')) }, 200)
  })
  router.openapi(deleteRole, async (c) => {
    const p = principalOf(c)
    await access.deleteRole(p, c.req.valid('param').id)
    return c.json({ success: true as const }, 200)
  })
  router.openapi(listGrants, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await access.grantsOf(p, c.req.valid('param').id) }, 200)
  })
  router.openapi(replaceGrants, async (c) => {
    const p = principalOf(c)
    const grants = await access.replaceGrants(p, c.req.valid('param').id, c.req.valid('json').grants)
    return c.json({ data: grants }, 200)
  })
  return router
}
