import type { Kysely } from 'kysely'
import type { ShareAccess } from './scope.js'

export interface ShareRow {
  id: string
  collection_id: string
  record_id: string
  user_id: string
  access: string
  created_by: string | null
  created_at: number
}

type Tables = { record_shares: ShareRow }

/** SQL for `record_shares` (system database); this module is its only owner. */
export function createSharesStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    /** Ids of the collection's records shared with the user at one of these levels (bounded). */
    async recordIdsFor(collectionId: string, userId: string, levels: readonly ShareAccess[]): Promise<string[]> {
      const rows = await db
        .selectFrom('record_shares')
        .select('record_id')
        .where('collection_id', '=', collectionId)
        .where('user_id', '=', userId)
        .where('access', 'in', [...levels])
        .limit(10_000)
        .execute()
      return rows.map((r) => r.record_id)
    },
    async ofRecord(collectionId: string, recordId: string): Promise<ShareRow[]> {
      return db
        .selectFrom('record_shares')
        .selectAll()
        .where('collection_id', '=', collectionId)
        .where('record_id', '=', recordId)
        .orderBy('created_at')
        .execute()
    },
    async byId(id: string): Promise<ShareRow | undefined> {
      return db.selectFrom('record_shares').selectAll().where('id', '=', id).executeTakeFirst()
    },
    async upsert(row: ShareRow): Promise<ShareRow> {
      return db
        .insertInto('record_shares')
        .values(row)
        .onConflict((oc) => oc.columns(['collection_id', 'record_id', 'user_id']).doUpdateSet({ access: row.access }))
        .returningAll()
        .executeTakeFirstOrThrow()
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom('record_shares').where('id', '=', id).execute()
    },
    async deleteOfRecord(collectionId: string, recordId: string): Promise<void> {
      await db
        .deleteFrom('record_shares')
        .where('collection_id', '=', collectionId)
        .where('record_id', '=', recordId)
        .execute()
    },
    /** Every share of a collection's records (after a truncate). */
    async deleteOfCollection(collectionId: string): Promise<void> {
      await db.deleteFrom('record_shares').where('collection_id', '=', collectionId).execute()
    },
  }
}

export type SharesStore = ReturnType<typeof createSharesStore>
