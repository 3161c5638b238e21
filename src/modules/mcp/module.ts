import type { AppModule } from '../../lib/module.js'
import { mcpRoutes } from './routes.js'
import { createMcpService, type McpDeps } from './service.js'

/** The tool server (issue 18, decision 043): REST at /api/v1/mcp/…, the invocation log, and MCP over Streamable HTTP on the same path. */
export function createMcpModule(deps: McpDeps) {
  const service = createMcpService(deps)
  return {
    service,
    routers: ({ security }) => mcpRoutes(service, security, { version: deps.version, log: deps.log }),
    async close() {
      deps.services.docs.close()
    },
  } satisfies AppModule
}
