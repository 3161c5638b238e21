import type { Kysely } from 'kysely'

/** An r2_sql collection's published file and writer claim (system table r2_sql_files, migration 0016). */
export interface R2SqlFileRow {
  collection_id: string
  project_id: string
  version: number
  size_bytes: number
  published_at: number
  writer: string | null
  writer_token: string | null
  lease_until: number | null
}

type Tables = { r2_sql_files: R2SqlFileRow }

/** The claim a compare-and-set expects to find: the token it read (null when nobody held one). */
interface Expected {
  readonly token: string | null
}

/** SQL for r2_sql_files; the r2_sql manager is its only user. Every change of the claim is a compare-and-set on the token. */
export function createR2SqlFilesStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  const number = (v: unknown) => (v === null || v === undefined ? null : Number(v))
  const row = (r: R2SqlFileRow | undefined): R2SqlFileRow | null =>
    r
      ? {
          ...r,
          version: Number(r.version),
          size_bytes: Number(r.size_bytes),
          published_at: Number(r.published_at),
          lease_until: number(r.lease_until),
        }
      : null
  const tokenIs = (expected: Expected) => (eb: any) =>
    expected.token === null ? eb('writer_token', 'is', null) : eb('writer_token', '=', expected.token)

  return {
    async get(collectionId: string): Promise<R2SqlFileRow | null> {
      return row(
        await db.selectFrom('r2_sql_files').selectAll().where('collection_id', '=', collectionId).executeTakeFirst(),
      )
    },
    /** `executor`: a transaction of the system database to write in (the collection's registration's). */
    async insert(value: R2SqlFileRow, executor: Kysely<any> = db): Promise<void> {
      await (executor as Kysely<Tables>).insertInto('r2_sql_files').values(value).execute()
    },
    /** Takes or renews the claim; false when the token moved since it was read. */
    async claim(
      collectionId: string,
      expected: Expected,
      claim: { writer: string; token: string; leaseUntil: number },
    ): Promise<boolean> {
      const result = await db
        .updateTable('r2_sql_files')
        .set({ writer: claim.writer, writer_token: claim.token, lease_until: claim.leaseUntil })
        .where('collection_id', '=', collectionId)
        .where(tokenIs(expected))
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },
    /** Records a new version, while the claim is still this token's; false otherwise. */
    async published(
      collectionId: string,
      token: string,
      next: { version: number; sizeBytes: number; publishedAt: number },
    ): Promise<boolean> {
      const result = await db
        .updateTable('r2_sql_files')
        .set({ version: next.version, size_bytes: next.sizeBytes, published_at: next.publishedAt })
        .where('collection_id', '=', collectionId)
        .where('writer_token', '=', token)
        .where('version', '=', next.version - 1)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },
    /** Gives the claim up, if it is still this token's. */
    async release(collectionId: string, token: string): Promise<void> {
      await db
        .updateTable('r2_sql_files')
        .set({ writer: null, writer_token: null, lease_until: null })
        .where('collection_id', '=', collectionId)
        .where('writer_token', '=', token)
        .execute()
    },
    async delete(collectionId: string): Promise<void> {
      await db.deleteFrom('r2_sql_files').where('collection_id', '=', collectionId).execute()
    },
  }
}

export type R2SqlFilesStore = ReturnType<typeof createR2SqlFilesStore>
