import type { Transport } from './transport.js'

/** A tool of the tool server, with its arguments' JSON Schema (2020-12). */
export interface ToolInfo {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

export interface ToolResource {
  uri: string
  name: string
  description: string
  mimeType: string
}

export interface ToolInvocation {
  id: string
  keyId: string
  tool: string
  inputTokens: number
  outputTokens: number
  durationMs: number
  /** `ok`, or the error code the call ended with. */
  outcome: string
  createdAt: string
}

/**
 * The tool server's REST surface (docs/mcp.md#rest-surface). Every call needs the client to hold an `sk-`
 * API key (`createClient({ apiKey })`); a session token is 401. The log needs `system/audit-log:read`.
 */
export interface Tools {
  info(): Promise<{ name: string; version: string; capabilities: Record<string, unknown> }>
  list(): Promise<ToolInfo[]>
  /** Runs a tool as the key's principal: `{ data }` unwrapped. Bad arguments are a ValidationError (422, `details.issues`). */
  invoke<T = unknown>(name: string, args?: Record<string, unknown>): Promise<T>
  resources(): Promise<ToolResource[]>
  readResource<T = unknown>(uri: string): Promise<ToolResource & { content: T }>
  log(query?: { key?: string; tool?: string; since?: string; until?: string; page?: number; limit?: number }): Promise<{
    data: ToolInvocation[]
    total: number
    page: number
    limit: number
    hasMore: boolean
  }>
}

const base = '/api/v1/mcp'

/** The tool-server part of the client, over one Transport. */
export function createTools(transport: Transport): Tools {
  const data = async <T>(method: string, path: string, body?: unknown) =>
    (await transport.request<{ data: T }>(method, path, body === undefined ? {} : { body })).data
  return {
    info: () => data('GET', base),
    list: () => data('GET', `${base}/tools`),
    invoke: (name, args = {}) => data('POST', `${base}/tools/${encodeURIComponent(name)}/invoke`, { arguments: args }),
    resources: () => data('GET', `${base}/resources`),
    readResource: (uri) => data('GET', `${base}/resources/${encodeURIComponent(uri)}`),
    log: (query = {}) => transport.request('GET', `${base}/log`, { query }),
  }
}
