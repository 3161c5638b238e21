import type { Kysely } from 'kysely'

export interface QuotaRow {
  project_id: string
  /** JSON: only the limits changed from the defaults. */
  limits: string
  updated_at: number
}

type Tables = { automate_quotas: QuotaRow }

/** SQL for `automate_quotas`; this module is its only owner. */
export function createQuotasStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async get(projectId: string): Promise<QuotaRow | undefined> {
      return db.selectFrom('automate_quotas').selectAll().where('project_id', '=', projectId).executeTakeFirst()
    },
    async put(row: QuotaRow): Promise<void> {
      await db
        .insertInto('automate_quotas')
        .values(row)
        .onConflict((oc) => oc.column('project_id').doUpdateSet({ limits: row.limits, updated_at: row.updated_at }))
        .execute()
    },
  }
}
