import type { Kysely } from 'kysely'

export interface WebhookRow {
  id: string
  project_id: string
  name: string
  collection: string
  /** JSON list of record event names. */
  events: string
  url: string
  /** The signing secret sealed (AES-256-GCM); null when deliveries are unsigned. */
  secret_sealed: string | null
  /** The JSON object of extra headers, sealed; null when there are none. */
  headers_sealed: string | null
  /** JSON list of the header names (reads need not unseal). */
  header_names: string
  active: boolean | number
  created_by: string | null
  created_at: number
  updated_at: number
}

export type WebhookChanges = Partial<Omit<WebhookRow, 'id' | 'project_id' | 'created_at' | 'created_by'>>

export interface DeliveryRow {
  id: string
  project_id: string
  webhook_id: string
  event: string
  collection: string
  record_id: string | null
  status: string
  payload: string
  attempts: number
  attempt_log: string
  response_status: number | null
  duration_ms: number | null
  error: string | null
  created_at: number
  updated_at: number
}

export type DeliveryOutcome = Pick<
  DeliveryRow,
  'status' | 'attempts' | 'attempt_log' | 'response_status' | 'duration_ms' | 'error' | 'updated_at'
>

type Tables = { webhooks: WebhookRow; webhook_deliveries: DeliveryRow }

/** SQL for `webhooks` and `webhook_deliveries`; this module is their only owner. Every function takes the project first. */
export function createWebhooksStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string): Promise<WebhookRow[]> {
      return db
        .selectFrom('webhooks')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    },
    async byId(projectId: string, id: string): Promise<WebhookRow | undefined> {
      return db
        .selectFrom('webhooks')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    /** The project's active webhooks (what record writes fan out to; cached by active-cache.ts). */
    async activeOf(projectId: string): Promise<WebhookRow[]> {
      return db
        .selectFrom('webhooks')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('active', '=', true)
        .execute()
    },
    async insert(row: WebhookRow): Promise<void> {
      await db.insertInto('webhooks').values(row).execute()
    },
    /** False when the row is gone. */
    async update(projectId: string, id: string, changes: WebhookChanges): Promise<boolean> {
      const result = await db
        .updateTable('webhooks')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** Deletes the webhook and its delivery log. False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom('webhook_deliveries')
          .where('project_id', '=', projectId)
          .where('webhook_id', '=', id)
          .execute()
        const result = await trx
          .deleteFrom('webhooks')
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .executeTakeFirst()
        return Number(result.numDeletedRows) > 0
      })
    },
    /** Deletes the webhooks of removed collections (and their logs); how many went. */
    async deleteOfCollections(projectId: string, collections: readonly string[]): Promise<number> {
      if (collections.length === 0) return 0
      return db.transaction().execute(async (trx) => {
        const ids = (
          await trx
            .selectFrom('webhooks')
            .select('id')
            .where('project_id', '=', projectId)
            .where('collection', 'in', [...collections])
            .execute()
        ).map((r) => r.id)
        if (ids.length === 0) return 0
        await trx
          .deleteFrom('webhook_deliveries')
          .where('project_id', '=', projectId)
          .where('webhook_id', 'in', ids)
          .execute()
        await trx.deleteFrom('webhooks').where('project_id', '=', projectId).where('id', 'in', ids).execute()
        return ids.length
      })
    },
    async insertDelivery(row: DeliveryRow): Promise<void> {
      await db.insertInto('webhook_deliveries').values(row).execute()
    },
    async deliveryById(projectId: string, id: string): Promise<DeliveryRow | undefined> {
      return db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    async recordOutcome(projectId: string, id: string, outcome: DeliveryOutcome): Promise<void> {
      await db
        .updateTable('webhook_deliveries')
        .set(outcome)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .execute()
    },
    /** A page of unsettled deliveries (pending, retrying) of every project, by id after `afterId` (start-up queues them again). */
    async unsettledDeliveriesOfAllProjects(afterId: string, limit: number): Promise<DeliveryRow[]> {
      return db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('status', 'in', ['pending', 'retrying'])
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute()
    },
    /** Deletes settled deliveries (success, failed) last touched before `beforeMs`, in every project; how many went. */
    async pruneDeliveriesOfAllProjects(beforeMs: number): Promise<number> {
      const result = await db
        .deleteFrom('webhook_deliveries')
        .where('updated_at', '<', beforeMs)
        .where('status', 'in', ['success', 'failed'])
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },
    /** A page of a webhook's deliveries, newest first, and how many there are. */
    async deliveries(
      projectId: string,
      webhookId: string,
      page: number,
      limit: number,
    ): Promise<{ rows: DeliveryRow[]; total: number }> {
      const base = db
        .selectFrom('webhook_deliveries')
        .where('project_id', '=', projectId)
        .where('webhook_id', '=', webhookId)
      const [rows, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(limit)
          .offset((page - 1) * limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
      ])
      return { rows, total: Number(count?.n ?? 0) }
    },
  }
}

export type WebhooksStore = ReturnType<typeof createWebhooksStore>
