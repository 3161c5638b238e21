import type { Kysely } from 'kysely'

export interface BindingRow {
  id: string
  project_id: string
  name: string
  kind: string
  url_sealed: string | null
  /** May connect to loopback, private and link-local addresses (a super_admin registered it). */
  private_network: boolean | number
  created_at: number
}

type Tables = { database_bindings: BindingRow }

/** SQL for `database_bindings`; this module is its only owner. */
export function createDatabasesStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string): Promise<BindingRow[]> {
      return db
        .selectFrom('database_bindings')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('created_at')
        .orderBy('name')
        .execute()
    },
    async byId(id: string): Promise<BindingRow | undefined> {
      return db.selectFrom('database_bindings').selectAll().where('id', '=', id).executeTakeFirst()
    },
    async insert(row: BindingRow): Promise<void> {
      await db.insertInto('database_bindings').values(row).execute()
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom('database_bindings').where('id', '=', id).execute()
    },
  }
}
