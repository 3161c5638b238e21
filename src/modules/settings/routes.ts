import { createRouter, defineRoute, errorResponses, principalOf, z, type Security } from '../../lib/http/index.js'
import type { SettingsService } from './service.js'

const SettingsSchema = z.record(z.string(), z.unknown()).openapi('Settings', {
  example: { 'auth.usernameEnabled': false, 'auth.requireEmail': true, 'ai.mcp_rate_limit': 100 },
})
const envelope = {
  description: 'Every setting, flat dotted keys',
  content: { 'application/json': { schema: z.object({ data: SettingsSchema }) } },
}

const getSettings = defineRoute({
  method: 'get',
  path: '/api/v1/settings',
  operationId: 'settings.get',
  summary: "The project's settings",
  tags: ['Settings'],
  permission: 'system/settings:read',
  responses: { 200: envelope, ...errorResponses('unauthorized', 'forbidden') },
})
const patchSettings = defineRoute({
  method: 'patch',
  path: '/api/v1/settings',
  operationId: 'settings.update',
  summary: 'Change some settings',
  tags: ['Settings'],
  permission: 'system/settings:update',
  request: { body: { required: true, content: { 'application/json': { schema: SettingsSchema } } } },
  responses: { 200: envelope, ...errorResponses('invalid_request', 'unauthorized', 'forbidden') },
})

/** GET and PATCH /api/v1/settings. */
export function settingsRoutes(settings: SettingsService, security: Security) {
  const router = createRouter(security)
  router.openapi(getSettings, async (c) => c.json({ data: await settings.read(principalOf(c)) }, 200))
  router.openapi(patchSettings, async (c) => {
    const p = principalOf(c)
    return c.json({ data: await settings.update(p, c.req.valid('json')) }, 200)
  })
  return router
}
