import type { Kysely } from 'kysely'

interface SettingRow {
  project_id: string
  key: string
  value: string
  updated_at: number
}

type Tables = { settings: SettingRow }

/** SQL for `settings`; this module is its only owner. */
export function createSettingsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async all(projectId: string): Promise<SettingRow[]> {
      return db.selectFrom('settings').selectAll().where('project_id', '=', projectId).execute()
    },
    async upsert(rows: SettingRow[]): Promise<void> {
      if (rows.length === 0) return
      await db
        .insertInto('settings')
        .values(rows)
        .onConflict((oc) =>
          oc
            .columns(['project_id', 'key'])
            .doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), updated_at: eb.ref('excluded.updated_at') })),
        )
        .execute()
    },
  }
}
