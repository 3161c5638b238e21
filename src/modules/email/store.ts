import type { Kysely } from 'kysely'

export interface MessageRow {
  id: string
  project_id: string
  message_id: string
  recipient: string
  channel: string
  status: string
  flow_id: string | null
  run_id: string | null
  step_key: string | null
  created_at: number
  delivered_at: number | null
}

export interface UsageRow {
  project_id: string
  day: string
  recipients: number
}

type Tables = { email_messages: MessageRow; email_daily_usage: UsageRow }

export interface LogQuery {
  page: number
  limit: number
  status?: string
  recipient?: string
  flowId?: string
  runId?: string
  messageId?: string
  /** Only rows logged at or after this time (milliseconds). */
  since?: number
}

/** SQL for `email_messages` and `email_daily_usage`; this module is their only owner. Every function takes the project first. */
export function createEmailStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>

  /** Recipients counted for the project on `day`. */
  async function used(projectId: string, day: string): Promise<number> {
    const row = await db
      .selectFrom('email_daily_usage')
      .select('recipients')
      .where('project_id', '=', projectId)
      .where('day', '=', day)
      .executeTakeFirst()
    return Number(row?.recipients ?? 0)
  }

  return {
    used,
    /**
     * Adds `count` to the project's recipients of `day` when the total stays within `limit`, in one
     * conditional update (two runs cannot both take the last places). Whether it was taken, and the figure
     * before this send.
     */
    async reserve(
      projectId: string,
      day: string,
      count: number,
      limit: number,
    ): Promise<{ taken: boolean; used: number }> {
      await db
        .insertInto('email_daily_usage')
        .values({ project_id: projectId, day, recipients: 0 })
        .onConflict((oc) => oc.columns(['project_id', 'day']).doNothing())
        .execute()
      const result = await db
        .updateTable('email_daily_usage')
        .set((eb) => ({ recipients: eb('recipients', '+', count) }))
        .where('project_id', '=', projectId)
        .where('day', '=', day)
        .where((eb) => eb(eb('recipients', '+', count), '<=', limit))
        .executeTakeFirst()
      const taken = Number(result.numUpdatedRows) > 0
      const now = await used(projectId, day)
      return { taken, used: taken ? now - count : now }
    },
    /** Gives back places reserved for a message that was not sent. */
    async release(projectId: string, day: string, count: number): Promise<void> {
      await db
        .updateTable('email_daily_usage')
        .set((eb) => ({ recipients: eb('recipients', '-', count) }))
        .where('project_id', '=', projectId)
        .where('day', '=', day)
        .where('recipients', '>=', count)
        .execute()
    },
    async insertMessages(rows: readonly MessageRow[]): Promise<void> {
      if (rows.length > 0)
        await db
          .insertInto('email_messages')
          .values([...rows])
          .execute()
    },
    /**
     * Marks the rows of a provider's message id delivered (only those of `recipient` when given), in any
     * project: a receipt names the message, not the project. How many rows changed.
     */
    async markDeliveredInAllProjects(messageId: string, recipient: string | null, at: number): Promise<number> {
      let query = db
        .updateTable('email_messages')
        .set({ status: 'delivered', delivered_at: at })
        .where('message_id', '=', messageId)
        .where('status', '=', 'sent')
      if (recipient !== null) query = query.where('recipient', '=', recipient)
      const result = await query.executeTakeFirst()
      return Number(result.numUpdatedRows)
    },
    /** A page of the project's log, newest first, and how many rows match. */
    async list(projectId: string, q: LogQuery): Promise<{ rows: MessageRow[]; total: number }> {
      let base = db.selectFrom('email_messages').where('project_id', '=', projectId)
      if (q.status !== undefined) base = base.where('status', '=', q.status)
      if (q.recipient !== undefined) base = base.where('recipient', '=', q.recipient)
      if (q.flowId !== undefined) base = base.where('flow_id', '=', q.flowId)
      if (q.runId !== undefined) base = base.where('run_id', '=', q.runId)
      if (q.messageId !== undefined) base = base.where('message_id', '=', q.messageId)
      if (q.since !== undefined) base = base.where('created_at', '>=', q.since)
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
      return { rows, total: Number(count?.n ?? 0) }
    },
  }
}

export type EmailStore = ReturnType<typeof createEmailStore>
