import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js'
import { isAppError } from '../../lib/errors.js'
import type { Logger } from '../../lib/log.js'
import type { McpService } from './service.js'

type Admitted = Awaited<ReturnType<McpService['admitted']>>

/** An error a tool call ended with, as the model reads it: the API's error envelope as text. */
function toolError(err: unknown, log: Logger): CallToolResult {
  const envelope = isAppError(err)
    ? { error: err.code, message: err.message, details: err.details }
    : { error: 'internal', message: 'Internal error', details: {} }
  if (!isAppError(err)) log.error({ err }, 'mcp: a tool failed')
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }] }
}

/** An error of a request other than a tool call, as a JSON-RPC error (nothing internal revealed). */
function rpcError(err: unknown, log: Logger): McpError {
  if (!isAppError(err)) {
    log.error({ err }, 'mcp: a request failed')
    return new McpError(ErrorCode.InternalError, 'Internal error')
  }
  return new McpError(err.code === 'not_found' ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest, err.message, {
    error: err.code,
    details: err.details,
  })
}

/**
 * One MCP server for one JSON-RPC request of an admitted key (stateless Streamable HTTP: nothing is kept
 * between requests, so any instance answers any request). Every handler calls the same service methods as
 * the REST surface: tools/call is `invoke` (logged), resources/read reads as the key.
 */
function serverFor(scope: Admitted, version: string, log: Logger): Server {
  const server = new Server({ name: 'plinth-tool-server', version }, { capabilities: { tools: {}, resources: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: scope.listTools().map((t) => ({ ...t, inputSchema: t.inputSchema as { type: 'object' } })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      const result = await scope.invoke(request.params.name, request.params.arguments ?? {})
      return {
        content: [{ type: 'text', text: JSON.stringify(result ?? null) }],
        structuredContent:
          result !== null && typeof result === 'object' && !Array.isArray(result)
            ? (result as Record<string, unknown>)
            : undefined,
      }
    } catch (err) {
      return toolError(err, log)
    }
  })
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: scope.listResources() }))
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    try {
      const read = await scope.readResource(request.params.uri)
      const text = typeof read.content === 'string' ? read.content : JSON.stringify(read.content, null, 2)
      return { contents: [{ uri: read.uri, mimeType: read.mimeType, text }] }
    } catch (err) {
      throw rpcError(err, log)
    }
  })
  return server
}

/** Answers one POST of JSON-RPC (a message or a batch) for an admitted key, as JSON. */
export async function answerRpc(
  scope: Admitted,
  request: Request,
  body: unknown,
  version: string,
  log: Logger,
): Promise<Response> {
  const server = serverFor(scope, version, log)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request, { parsedBody: body })
  } finally {
    await server.close()
  }
}
