import { queryInteger, z } from '../../lib/http/index.js'

/** The wire shapes of the tool server's REST routes; they feed validation and the OpenAPI document. */

export const ServerInfoSchema = z
  .object({
    name: z.string(),
    version: z.string(),
    capabilities: z.record(z.string(), z.unknown()),
  })
  .openapi('McpServerInfo')

export const ToolSchema = z
  .object({
    name: z.string().openapi({ example: 'search_records' }),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()).openapi({ description: 'JSON Schema of the arguments' }),
  })
  .openapi('McpTool')

export const ResourceSchema = z
  .object({
    uri: z.string().openapi({ example: 'service://collections' }),
    name: z.string(),
    description: z.string(),
    mimeType: z.string(),
  })
  .openapi('McpResource')

export const ResourceContentSchema = ResourceSchema.extend({
  content: z.unknown().openapi({ description: 'A JSON value (application/json) or the markdown text (text/markdown)' }),
}).openapi('McpResourceContent')

export const InvokeBodySchema = z.object({
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .openapi({ description: "The tool's arguments (addendum §7); {} when absent" }),
})

export const InvocationSchema = z
  .object({
    id: z.string(),
    keyId: z.string(),
    tool: z.string(),
    inputTokens: z.number().int().openapi({ description: 'Estimated: characters of the arguments / 4' }),
    outputTokens: z.number().int().openapi({ description: 'Estimated: characters of the result / 4' }),
    durationMs: z.number().int(),
    outcome: z.string().openapi({ description: 'ok, or the error code the call ended with' }),
    createdAt: z.string(),
  })
  .openapi('McpInvocation')

/** A time in a query: ISO 8601 with offset, or milliseconds since the epoch. */
const queryTime = z
  .string()
  .max(40)
  .refine(
    (v) => /^\d{1,15}$/.test(v) || !Number.isNaN(Date.parse(v)),
    'Expected an ISO 8601 time or milliseconds since the epoch',
  )
  .transform((v) => (/^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v)))
  .optional()

export const InvocationQuerySchema = z.object({
  page: queryInteger({ min: 1, default: 1 }),
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  key: z.string().min(1).max(64).optional().openapi({ description: 'Only this API key id' }),
  tool: z.string().min(1).max(100).optional().openapi({ description: 'Only this tool' }),
  since: queryTime.openapi({
    type: 'string',
    description: 'From this time (inclusive): ISO 8601 or epoch milliseconds',
  }),
  until: queryTime.openapi({
    type: 'string',
    description: 'Before this time (exclusive): ISO 8601 or epoch milliseconds',
  }),
})
