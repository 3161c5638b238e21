import { sql, type Kysely } from 'kysely'

export interface AuditRow {
  id: string
  project_id: string
  at: number
  seq: number
  action: string
  actor_type: string
  actor_id: string | null
  target_type: string | null
  target_id: string | null
  ip: string | null
  details: string
}

type Tables = { audit_log: AuditRow }

/** SQL for `audit_log`; this module is its only owner. */
export function createAuditStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async insert(row: AuditRow): Promise<void> {
      await db.insertInto('audit_log').values(row).execute()
    },
    async page(
      projectId: string,
      action: string | null,
      offset: number,
      limit: number,
    ): Promise<{ rows: AuditRow[]; total: number }> {
      let query = db.selectFrom('audit_log').where('project_id', '=', projectId)
      if (action) query = query.where('action', '=', action)
      const [rows, total] = await Promise.all([
        query.selectAll().orderBy('at', 'desc').orderBy('seq', 'desc').offset(offset).limit(limit).execute(),
        query.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
      ])
      return { rows, total: Number(total.n) }
    },
  }
}
