import { createRouter, defineRoute } from '../../lib/http/index.js'
import { HealthSchema } from './schemas.js'
import type { SystemService } from './service.js'

const healthResponse = {
  200: { description: 'The instance accepts requests', content: { 'application/json': { schema: HealthSchema } } },
}

export const healthRoute = defineRoute({
  method: 'get',
  path: '/health',
  operationId: 'system.health',
  summary: 'Instance health and capabilities',
  tags: ['System'],
  permission: null,
  responses: healthResponse,
})

export const systemHealthRoute = defineRoute({
  method: 'get',
  path: '/api/v1/system/health',
  operationId: 'system.healthVersioned',
  summary: 'Instance health and capabilities (versioned path)',
  tags: ['System'],
  permission: null,
  responses: healthResponse,
})

/** GET /health and GET /api/v1/system/health. */
export function systemRoutes(system: SystemService) {
  const router = createRouter()
  router.openapi(healthRoute, (c) => c.json(system.health(), 200))
  router.openapi(systemHealthRoute, (c) => c.json(system.health(), 200))
  return router
}
