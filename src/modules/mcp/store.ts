import type { Kysely } from 'kysely'

export interface InvocationRow {
  id: string
  project_id: string
  key_id: string
  tool: string
  input_tokens: number
  output_tokens: number
  duration_ms: number
  /** `ok`, or the error code the call ended with. */
  outcome: string
  created_at: number
}

export interface InvocationQuery {
  page: number
  limit: number
  keyId?: string
  tool?: string
  /** Milliseconds, inclusive. */
  since?: number
  /** Milliseconds, exclusive. */
  until?: number
}

interface Tables {
  mcp_invocations: InvocationRow
}

/** SQL for `mcp_invocations`; this module is its only owner. Every function takes the project first. */
export function createMcpStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    /** Logs one invocation. */
    async insert(row: InvocationRow): Promise<void> {
      await db.insertInto('mcp_invocations').values(row).execute()
    },

    /** A page of the project's invocations, newest first, with the total matching. */
    async list(projectId: string, q: InvocationQuery): Promise<{ rows: InvocationRow[]; total: number }> {
      let base = db.selectFrom('mcp_invocations').where('project_id', '=', projectId)
      if (q.keyId !== undefined) base = base.where('key_id', '=', q.keyId)
      if (q.tool !== undefined) base = base.where('tool', '=', q.tool)
      if (q.since !== undefined) base = base.where('created_at', '>=', q.since)
      if (q.until !== undefined) base = base.where('created_at', '<', q.until)
      const [rows, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(q.limit)
          .offset((q.page - 1) * q.limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
      ])
      return {
        rows: rows.map((r) => ({
          ...r,
          input_tokens: Number(r.input_tokens),
          output_tokens: Number(r.output_tokens),
          duration_ms: Number(r.duration_ms),
          created_at: Number(r.created_at),
        })),
        total: Number(count?.n ?? 0),
      }
    },
  }
}

export type McpStore = ReturnType<typeof createMcpStore>
