import { createRouter, defineRoute, errorResponses, principalOf, z, type Security } from '../../lib/http/index.js'
import type { ProjectsService } from './service.js'

const ProjectSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    isDefault: z.boolean(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('Project')

const listProjects = defineRoute({
  method: 'get',
  path: '/api/v1/projects',
  operationId: 'projects.list',
  summary: 'Every project (super_admin)',
  tags: ['Projects'],
  permission: 'instance/projects:read',
  responses: {
    200: {
      description: 'Projects',
      content: { 'application/json': { schema: z.object({ data: z.array(ProjectSchema) }) } },
    },
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const createProject = defineRoute({
  method: 'post',
  path: '/api/v1/projects',
  operationId: 'projects.create',
  summary: 'Create a project with its own database (super_admin)',
  tags: ['Projects'],
  permission: 'instance/projects:create',
  request: {
    body: {
      required: true,
      content: { 'application/json': { schema: z.object({ name: z.string().trim().min(1).max(200) }) } },
    },
  },
  responses: {
    201: { description: 'Created', content: { 'application/json': { schema: z.object({ data: ProjectSchema }) } } },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})

/** GET and POST /api/v1/projects (addendum §2): super_admin only, through the `instance/` resources. */
export function projectsRoutes(projects: ProjectsService, security: Security) {
  const router = createRouter(security)
  router.openapi(listProjects, async (c) => c.json({ data: await projects.list(principalOf(c)) }, 200))
  router.openapi(createProject, async (c) => {
    const project = await projects.create(principalOf(c), c.req.valid('json').name)
    return c.json({ data: project }, 201)
  })
  return router
}
