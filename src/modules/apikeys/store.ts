import type { Kysely } from 'kysely'

export interface ApiKeyRow {
  id: string
  project_id: string
  user_id: string | null
  label: string
  capabilities: string
  key_hash: string
  created_at: number
  expires_at: number | null
  last_used_at: number | null
}

type Tables = { api_keys: ApiKeyRow }

/** SQL for `api_keys`; this module is its only owner. */
export function createApiKeysStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async insert(row: ApiKeyRow): Promise<void> {
      await db.insertInto('api_keys').values(row).execute()
    },
    async byHash(hash: string): Promise<ApiKeyRow | undefined> {
      return db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst()
    },
    async byId(id: string): Promise<ApiKeyRow | undefined> {
      return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
    },
    async list(projectId: string, userId: string | null): Promise<ApiKeyRow[]> {
      let query = db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId)
      if (userId !== null) query = query.where('user_id', '=', userId)
      return query.orderBy('created_at', 'desc').orderBy('id').execute()
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom('api_keys').where('id', '=', id).execute()
    },
    async touch(id: string, at: number): Promise<void> {
      await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute()
    },
  }
}
