import { AppError } from '../../lib/errors.js'
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
  InvocationQuerySchema,
  InvocationSchema,
  InvokeBodySchema,
  ResourceContentSchema,
  ResourceSchema,
  ServerInfoSchema,
  ToolSchema,
} from './schemas.js'
import type { Logger } from '../../lib/log.js'
import type { McpService } from './service.js'
import { answerRpc } from './transport.js'

const tags = ['Tool server']
// Any valid credential passes the guard; the key-only security below refuses everything but an sk- key with 401.
const permission = 'authenticated'
const keyErrors = ['unauthorized', 'rate_limited'] as const

const info = defineRoute({
  method: 'get',
  path: '/api/v1/mcp',
  operationId: 'mcp.info',
  summary: 'Tool server name, version and capabilities (sk- API keys only)',
  tags,
  permission,
  responses: {
    200: jsonContent(z.object({ data: ServerInfoSchema }), 'Server info'),
    ...errorResponses(...keyErrors, 'method_not_allowed'),
  },
})
const rpc = defineRoute({
  method: 'post',
  path: '/api/v1/mcp',
  operationId: 'mcp.rpc',
  summary:
    'Model Context Protocol: JSON-RPC 2.0 over Streamable HTTP, stateless (initialize, tools/list, tools/call, resources/list, resources/read); sk- API keys only',
  tags,
  permission,
  request: jsonBody(
    z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .openapi({ description: 'A JSON-RPC 2.0 message or batch' }),
  ),
  responses: {
    200: jsonContent(z.unknown().openapi({ description: 'The JSON-RPC response(s)' }), 'JSON-RPC response'),
    202: { description: 'A notification or response was accepted (no body)' },
    ...errorResponses('invalid_request', ...keyErrors, 'unsupported_media_type'),
  },
})
const listResources = defineRoute({
  method: 'get',
  path: '/api/v1/mcp/resources',
  operationId: 'mcp.resources',
  summary: 'The tool server resources',
  tags,
  permission,
  responses: {
    200: jsonContent(z.object({ data: z.array(ResourceSchema) }), 'Resources'),
    ...errorResponses(...keyErrors),
  },
})
const readResource = defineRoute({
  method: 'get',
  path: '/api/v1/mcp/resources/{uri}',
  operationId: 'mcp.readResource',
  summary: 'Read one resource (its URI URL-encoded), as the key may see it',
  tags,
  permission,
  request: {
    params: z.object({ uri: z.string().min(1).max(300).openapi({ example: 'service%3A%2F%2Fcollections' }) }),
  },
  responses: {
    200: jsonContent(z.object({ data: ResourceContentSchema }), 'The resource'),
    ...errorResponses('invalid_request', ...keyErrors, 'forbidden', 'not_found'),
  },
})
const listTools = defineRoute({
  method: 'get',
  path: '/api/v1/mcp/tools',
  operationId: 'mcp.tools',
  summary: 'The tools, each with the JSON Schema of its arguments',
  tags,
  permission,
  responses: { 200: jsonContent(z.object({ data: z.array(ToolSchema) }), 'Tools'), ...errorResponses(...keyErrors) },
})
const invoke = defineRoute({
  method: 'post',
  path: '/api/v1/mcp/tools/{name}/invoke',
  operationId: 'mcp.invoke',
  summary: 'Invoke a tool as the key (read-only, its permissions apply); logged',
  tags,
  permission,
  request: { params: z.object({ name: z.string().min(1).max(100) }), ...jsonBody(InvokeBodySchema) },
  responses: {
    200: jsonContent(
      z.object({ data: z.unknown().openapi({ description: "The tool's result (docs/mcp.md)" }) }),
      'The result',
    ),
    ...errorResponses(
      'invalid_request',
      ...keyErrors,
      'forbidden',
      'not_found',
      'collection_not_found',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})
const invocationLog = defineRoute({
  method: 'get',
  path: '/api/v1/mcp/log',
  operationId: 'mcp.log',
  summary: 'The tool invocation log, newest first: tool, key, estimated tokens, duration, outcome',
  tags,
  permission: 'system/audit-log:read',
  request: { query: InvocationQuerySchema },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(InvocationSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of invocations',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})

/** The caller resolved as usual, then refused with 401 unless it is an sk- API key (core-api § Authentication 13). */
export function keyOnly(security: Security): Security {
  return {
    async authenticate(c) {
      const principal = await security.authenticate(c)
      if (principal.kind !== 'api_key')
        throw new AppError(
          'unauthorized',
          'The tool server takes an sk- API key as Bearer; sessions and capability tokens are refused',
        )
      return principal
    },
    authorize: security.authorize,
  }
}

/** True when the client asks for an event stream rather than JSON (an MCP client's GET). */
export function wantsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('text/event-stream') && !accept.includes('application/json')
}

/** /api/v1/mcp (core-api § Tool server): the REST surface; the MCP transport shares the path (transport.ts). */
export function mcpRoutes(mcp: McpService, security: Security, server: { version: string; log: Logger }) {
  const keys = createRouter(keyOnly(security))
  keys.openapi(info, async (c) => {
    // An MCP client opening its server-to-client stream: this stateless server has none (the spec's 405).
    if (wantsEventStream(c.req.header('accept')))
      throw new AppError(
        'method_not_allowed',
        'This tool server sends no server-initiated stream; POST JSON-RPC to /api/v1/mcp',
      )
    return c.json({ data: await mcp.info(principalOf(c)) }, 200)
  })
  // The rate limit counts each POST once (one JSON-RPC message or batch); a refused one is 429 with Retry-After before any JSON-RPC.
  keys.openapi(
    rpc,
    async (c) =>
      answerRpc(
        await mcp.admitted(principalOf(c)),
        c.req.raw,
        c.req.valid('json'),
        server.version,
        server.log,
      ) as never,
  )
  keys.openapi(listResources, async (c) => c.json({ data: await mcp.listResources(principalOf(c)) }, 200))
  keys.openapi(readResource, async (c) =>
    c.json({ data: await mcp.readResource(principalOf(c), c.req.valid('param').uri) }, 200),
  )
  keys.openapi(listTools, async (c) => c.json({ data: await mcp.listTools(principalOf(c)) }, 200))
  keys.openapi(invoke, async (c) => {
    const { name } = c.req.valid('param')
    return c.json({ data: (await mcp.invoke(principalOf(c), name, c.req.valid('json').arguments ?? {})) ?? null }, 200)
  })
  const admin = createRouter(security)
  admin.openapi(invocationLog, async (c) => {
    const { page, limit, key, tool, since, until } = c.req.valid('query')
    const { data, total } = await mcp.log(principalOf(c), { page, limit, keyId: key, tool, since, until })
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  return [keys, admin]
}
