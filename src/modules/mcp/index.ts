export { createMcpModule } from './module.js'
export {
  createMcpService,
  serverName,
  type Invocation,
  type McpDeps,
  type McpService,
  type ResourceDescriptor,
  type ToolDescriptor,
} from './service.js'
export { resources, shownSettings, type ResourceDefinition } from './resources.js'
export { tools, toolNamed } from './tools/index.js'
export { defineTool, type DocsHit, type DocsIndex, type ToolDefinition, type ToolServices } from './types.js'
export { createDocsIndex, defaultDocsDir, sharedDocsIndex, type DocHit, type DocPage } from './docs-index.js'
