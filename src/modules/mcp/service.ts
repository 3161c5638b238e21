import { jsonSize } from '../../lib/json-size.js'
import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { RateLimiter } from '../../lib/ratelimit/index.js'
import type { AccessService } from '../access/index.js'
import type { SettingsService } from '../settings/index.js'
import { resourceAt, resources } from './resources.js'
import { createMcpStore, type InvocationQuery } from './store.js'
import { toolNamed, tools } from './tools/index.js'
import type { ToolServices } from './types.js'

export interface McpDeps {
  systemDb: Kysely<any>
  clock: Clock
  log: Logger
  /** The shared rate limiter (Redis-backed in scale-out): the per-key limit holds across instances. */
  limiter: RateLimiter
  /** Plinth's version, shown as the server's. */
  version: string
  access: Pick<AccessService, 'authorize'>
  services: ToolServices & { settings: Pick<SettingsService, 'get' | 'read'> }
}

/** A tool as GET /tools and MCP tools/list describe it. */
export interface ToolDescriptor {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

/** A resource as GET /resources and MCP resources/list describe it. */
export interface ResourceDescriptor {
  uri: string
  name: string
  description: string
  mimeType: string
}

/** One logged invocation, as GET /api/v1/mcp/log answers it. */
export interface Invocation {
  id: string
  keyId: string
  tool: string
  inputTokens: number
  outputTokens: number
  durationMs: number
  outcome: string
  createdAt: string
}

export const serverName = 'plinth-tool-server'
const windowMs = 60_000

/** Tokens a model would spend on this text, estimated as characters / 4. */
// jsonSize walks with its own stack: a hostile argument nested 50,000 deep cannot overflow it (JSON.stringify
// did, in the invocation log's finally, and turned a refused filter into a 500). Counted up to 100 MB.
const tokensOf = (value: unknown): number => Math.ceil((value === undefined ? 0 : jsonSize(value, 100_000_000)) / 4)

/** The tool's argument schema as JSON Schema (draft 2020-12), what an MCP client shows and checks. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>
  return rest
}

/**
 * The tool server (core-api § Tool server, decision 043): the tools and resources, each read as the
 * calling key's principal through the services' own checks, so nothing a key could not read directly is
 * shown, and no tool writes. Every method refuses a caller that is not an `sk-` key (unauthorized) and counts
 * one request against the key's per-minute limit (rate_limited with Retry-After); `invoke` also logs.
 */
export function createMcpService(deps: McpDeps) {
  const store = createMcpStore(deps.systemDb)
  const descriptors: ToolDescriptor[] = tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: jsonSchemaOf(t.inputSchema),
  }))

  /** Refuses anything but an API key; counts one request against the key's limit. Throws unauthorized, rate_limited. */
  async function admit(principal: Principal): Promise<void> {
    if (principal.kind !== 'api_key' || principal.apiKeyId === null)
      throw new AppError(
        'unauthorized',
        'The tool server takes an sk- API key as Bearer; sessions and capability tokens are refused',
      )
    const limit = await deps.services.settings.get(principal.projectId, 'ai.mcp_rate_limit')
    const verdict = await deps.limiter.hit(`mcp:${principal.apiKeyId}`, limit, windowMs)
    if (!verdict.allowed) {
      throw new AppError(
        'rate_limited',
        `At most ${limit} tool server requests per minute per API key`,
        { retryAfter: verdict.retryAfterSeconds, limit },
        {
          headers: { 'Retry-After': String(verdict.retryAfterSeconds) },
        },
      )
    }
  }

  /** The arguments checked against the tool's schema. Throws validation_error naming each bad path (`arguments.collection`). */
  function checked(schema: z.ZodType, args: unknown): unknown {
    const parsed = schema.safeParse(args ?? {})
    if (parsed.success) return parsed.data
    const issues = parsed.error.issues.map((i) => ({
      path: ['arguments', ...i.path.map(String)].join('.'),
      message: i.message,
    }))
    const first = issues[0]!
    throw new AppError(
      'validation_error',
      `${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`,
      { issues },
    )
  }

  /** What one admitted request of a key may do: each call is as that key, counted once already by `admitted`. */
  function scopedTo(principal: Principal) {
    return {
      /** Every tool with its input JSON Schema. */
      listTools(): ToolDescriptor[] {
        return descriptors
      },

      /** Every resource. */
      listResources(): ResourceDescriptor[] {
        return resources.map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType }))
      },

      /** One resource, read as the key. Throws not_found (no such URI), forbidden (settings). */
      async readResource(uri: string): Promise<ResourceDescriptor & { content: unknown }> {
        const resource = resourceAt(uri)
        if (!resource) throw new AppError('not_found', `No resource ${uri.slice(0, 100)}`, { uri: uri.slice(0, 100) })
        const { name, description, mimeType } = resource
        return { uri, name, description, mimeType, content: await resource.read(principal, deps.services) }
      },

      /**
       * Runs one tool as the key and logs the call (tool, key, estimated tokens, duration, outcome). Throws
       * not_found (no such tool), validation_error (bad arguments), and whatever the service the tool reads
       * throws (forbidden, collection_not_found, …).
       */
      async invoke(name: string, args: unknown): Promise<unknown> {
        const tool = toolNamed(name)
        if (!tool) throw new AppError('not_found', `No tool ${name.slice(0, 100)}`, { tool: name.slice(0, 100) })
        const started = deps.clock.now()
        let outcome = 'ok'
        let result: unknown
        try {
          result = await tool.run(principal, checked(tool.inputSchema, args) as never, deps.services)
          return result
        } catch (err) {
          outcome = isAppError(err)
            ? err.code
            : typeof (err as { code?: unknown })?.code === 'string'
              ? String((err as { code: string }).code)
              : 'internal'
          throw err
        } finally {
          const row = {
            id: newId(),
            project_id: principal.projectId,
            key_id: principal.apiKeyId!,
            tool: tool.name,
            input_tokens: tokensOf(args ?? {}),
            output_tokens: tokensOf(result),
            duration_ms: Math.max(0, deps.clock.now() - started),
            outcome,
            created_at: started,
          }
          await store
            .insert(row)
            .catch((err: unknown) => deps.log.warn({ err, tool: tool.name }, 'mcp: the invocation log write failed'))
        }
      },
    }
  }

  /** Refuses anything but an sk- key and counts one request against its limit; then the key's view. Throws unauthorized, rate_limited. */
  async function admitted(principal: Principal) {
    await admit(principal)
    return scopedTo(principal)
  }

  return {
    /**
     * One request of a key (an MCP JSON-RPC message, or one REST call): refuses anything but an sk- key,
     * counts one request against the key's limit, and answers what that request may do. Throws unauthorized, rate_limited.
     */
    admitted,

    /** The server's name, version and capabilities. Throws unauthorized, rate_limited. */
    async info(principal: Principal) {
      await admit(principal)
      return {
        name: serverName,
        version: deps.version,
        capabilities: {
          tools: { count: tools.length },
          resources: { count: resources.length },
          protocol: 'mcp-streamable-http',
        },
      }
    },

    /** Every tool with its input JSON Schema. Throws unauthorized, rate_limited. */
    async listTools(principal: Principal): Promise<ToolDescriptor[]> {
      return (await admitted(principal)).listTools()
    },

    /** Every resource. Throws unauthorized, rate_limited. */
    async listResources(principal: Principal): Promise<ResourceDescriptor[]> {
      return (await admitted(principal)).listResources()
    },

    /** One resource, read as the key. Throws unauthorized, rate_limited, not_found (no such URI), forbidden (settings). */
    async readResource(principal: Principal, uri: string): Promise<ResourceDescriptor & { content: unknown }> {
      return (await admitted(principal)).readResource(uri)
    },

    /**
     * Runs one tool as the key and logs the call. Throws unauthorized, rate_limited (neither logged),
     * not_found (no such tool), validation_error (bad arguments), and whatever the tool's service throws.
     */
    async invoke(principal: Principal, name: string, args: unknown): Promise<unknown> {
      return (await admitted(principal)).invoke(name, args)
    },

    /** The invocation log of the caller's project, newest first. Throws unauthorized, forbidden (system/audit-log:read). */
    async log(actor: Principal, query: InvocationQuery): Promise<{ data: Invocation[]; total: number }> {
      await deps.access.authorize(actor, 'system/audit-log:read')
      const { rows, total } = await store.list(actor.projectId, query)
      return {
        data: rows.map((r) => ({
          id: r.id,
          keyId: r.key_id,
          tool: r.tool,
          inputTokens: r.input_tokens,
          outputTokens: r.output_tokens,
          durationMs: r.duration_ms,
          outcome: r.outcome,
          createdAt: new Date(r.created_at).toISOString(),
        })),
        total,
      }
    },
  }
}

export type McpService = ReturnType<typeof createMcpService>
