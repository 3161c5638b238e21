import type { OpenAPIHono } from '@hono/zod-openapi'
import { createRouter, defineRoute, z, type AppEnv } from '../lib/http/index.js'
import { docsAsset, docsAssetNames, docsContentSecurityPolicy, docsPage } from './docs-ui.js'
import { renderLlmContext } from './llm-context.js'

type Document = ReturnType<OpenAPIHono<AppEnv>['getOpenAPI31Document']>

const openapiResponse = {
  200: {
    description: 'OpenAPI 3.1 description of every route',
    content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
  },
}

export const openapiRoute = defineRoute({
  method: 'get',
  path: '/api/openapi.json',
  operationId: 'system.openapi',
  summary: 'OpenAPI 3.1 document',
  tags: ['System'],
  permission: null,
  responses: openapiResponse,
})

export const openapiVersionedRoute = defineRoute({
  method: 'get',
  path: '/api/v1/system/openapi.json',
  operationId: 'system.openapiVersioned',
  summary: 'OpenAPI 3.1 document (versioned path)',
  tags: ['System'],
  permission: null,
  responses: openapiResponse,
})

export const llmContextRoute = defineRoute({
  method: 'get',
  path: '/api/v1/system/llm-context',
  operationId: 'system.llmContext',
  summary: 'Markdown summary of the API for AI tools',
  tags: ['System'],
  permission: null,
  responses: { 200: { description: 'Markdown', content: { 'text/markdown': { schema: z.string() } } } },
})

export const docsRoute = defineRoute({
  method: 'get',
  path: '/api/docs',
  operationId: 'system.docs',
  summary: 'Interactive API reference (served from local assets)',
  tags: ['System'],
  permission: null,
  responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } } },
})

export const docsAssetRoute = defineRoute({
  method: 'get',
  path: '/api/docs/assets/{file}',
  operationId: 'system.docsAsset',
  summary: 'A static asset of the API reference page',
  tags: ['System'],
  permission: null,
  request: { params: z.object({ file: z.enum(docsAssetNames) }) },
  responses: { 200: { description: 'The asset' } },
})

/**
 * Serves the description of `app` itself. The document is generated from the route declarations
 * on first request (every route is registered by then) and kept.
 */
export function openapiRoutes(app: OpenAPIHono<AppEnv>, info: { version: string; publicUrl: string }) {
  let document: Document | undefined
  let markdown: string | undefined
  const getDocument = (): Document =>
    (document ??= app.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'Plinth API',
        version: info.version,
        description:
          'Every response carries `X-API-Version: v1` and `X-Request-ID`. Errors use the envelope `{ error, message, details }`. ' +
          'Unversioned `/api/…` paths are deprecated aliases of `/api/v1/…`.',
      },
      servers: [{ url: info.publicUrl }],
    }))

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'A session token, an `sk-` API key or an `sct1.` capability token',
  })

  const router = createRouter()
  router.openapi(openapiRoute, (c) => c.json(getDocument(), 200))
  router.openapi(openapiVersionedRoute, (c) => c.json(getDocument(), 200))
  router.openapi(llmContextRoute, (c) => {
    markdown ??= renderLlmContext(getDocument())
    return c.body(markdown, 200, { 'Content-Type': 'text/markdown; charset=utf-8' })
  })
  const docsPolicy = docsContentSecurityPolicy(info.publicUrl)
  router.openapi(docsRoute, (c) => c.html(docsPage(), 200, { 'Content-Security-Policy': docsPolicy }))
  router.openapi(docsAssetRoute, (c) => {
    const asset = docsAsset(c.req.valid('param').file)
    return c.body(asset.body, 200, { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=86400' })
  })
  return router
}
