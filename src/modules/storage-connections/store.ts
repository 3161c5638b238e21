import type { Kysely } from 'kysely'

export interface StorageConnectionRow {
  id: string
  project_id: string
  label: string
  provider: string
  endpoint: string
  region: string
  bucket_name: string
  access_key_id: string
  /** The secret key sealed with AES-256-GCM; never the plaintext. */
  secret_key_sealed: string
  created_at: number
  updated_at: number
}

export type StorageConnectionChanges = Partial<Omit<StorageConnectionRow, 'id' | 'project_id' | 'created_at'>>

type Tables = { storage_connections: StorageConnectionRow }

/** SQL for `storage_connections`; this module is its only owner. Every function takes the project first. */
export function createStorageConnectionsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string): Promise<StorageConnectionRow[]> {
      return db
        .selectFrom('storage_connections')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    },
    async byId(projectId: string, id: string): Promise<StorageConnectionRow | undefined> {
      return db
        .selectFrom('storage_connections')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    async insert(row: StorageConnectionRow): Promise<void> {
      await db.insertInto('storage_connections').values(row).execute()
    },
    /** Applies the changes; false when the row is gone (deleted meanwhile). */
    async update(projectId: string, id: string, changes: StorageConnectionChanges): Promise<boolean> {
      const result = await db
        .updateTable('storage_connections')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('storage_connections')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}
