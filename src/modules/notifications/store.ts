import { sql, type Kysely } from 'kysely'

export interface NotificationRow {
  id: string
  project_id: string
  user_id: string
  title: string
  message: string
  type: string
  link: string | null
  flow_id: string | null
  run_id: string | null
  dedupe_key: string | null
  /** Milliseconds since the epoch (the inbox orders by it); null while unread. */
  read_at: number | null
  /** Milliseconds since the epoch. */
  created_at: number
}

type Tables = { notifications: NotificationRow }

/** SQL for `notifications`; this module is its only owner. Every function takes the project first, then the user whose inbox it is. */
export function createNotificationsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  const numeric = (row: NotificationRow): NotificationRow => ({
    ...row,
    read_at: row.read_at === null ? null : Number(row.read_at),
    created_at: Number(row.created_at),
  })
  const inbox = (projectId: string, userId: string) =>
    db.selectFrom('notifications').where('project_id', '=', projectId).where('user_id', '=', userId)
  return {
    /** One page of a user's inbox: unread first, then newest first. */
    async page(
      projectId: string,
      userId: string,
      offset: number,
      limit: number,
      unreadOnly: boolean,
    ): Promise<{ rows: NotificationRow[]; total: number; unread: number }> {
      let query = inbox(projectId, userId)
      if (unreadOnly) query = query.where('read_at', 'is', null)
      const rows = await query
        .selectAll()
        .orderBy(sql`case when read_at is null then 0 else 1 end`)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute()
      const counts = await inbox(projectId, userId)
        .select((eb) => [
          eb.fn.countAll<number>().as('total'),
          eb.fn.sum<number>(sql`case when read_at is null then 1 else 0 end`).as('unread'),
        ])
        .executeTakeFirstOrThrow()
      const unread = Number(counts.unread ?? 0)
      return { rows: rows.map(numeric), total: unreadOnly ? unread : Number(counts.total), unread }
    },
    async byId(projectId: string, userId: string, id: string): Promise<NotificationRow | undefined> {
      const row = await inbox(projectId, userId).selectAll().where('id', '=', id).executeTakeFirst()
      return row && numeric(row)
    },
    /** Whether the user has an unread notification with this dedupe key. */
    async unreadWithKey(projectId: string, userId: string, key: string): Promise<boolean> {
      return (
        (await inbox(projectId, userId)
          .select('id')
          .where('dedupe_key', '=', key)
          .where('read_at', 'is', null)
          .executeTakeFirst()) !== undefined
      )
    },
    async insert(row: NotificationRow): Promise<void> {
      await db.insertInto('notifications').values(row).execute()
    },
    /** Marks one of the user's notifications read (kept as first read); false when it is not theirs or gone. */
    async markRead(projectId: string, userId: string, id: string, at: number): Promise<boolean> {
      const found = await inbox(projectId, userId).select('id').where('id', '=', id).executeTakeFirst()
      if (!found) return false
      await db
        .updateTable('notifications')
        .set({ read_at: at })
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .where('read_at', 'is', null)
        .execute()
      return true
    },
    /** Marks every unread notification of the user read; how many changed. */
    async markAllRead(projectId: string, userId: string, at: number): Promise<number> {
      const result = await db
        .updateTable('notifications')
        .set({ read_at: at })
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .where('read_at', 'is', null)
        .executeTakeFirst()
      return Number(result.numUpdatedRows)
    },
    /** Deletes one of the user's notifications; false when it is not theirs or gone. */
    async delete(projectId: string, userId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('notifications')
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}

export type NotificationsStore = ReturnType<typeof createNotificationsStore>
