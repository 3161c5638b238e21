import type { Kysely } from 'kysely'
import { lockTransaction, type DbHandle, type DbKind } from '../../lib/db/index.js'

/** An import job's state, kept in the database its rows go to, and written in their transactions. */
export interface LedgerJobRow {
  job_id: string
  status: string
  imported: number
  failed: number
  chunks: number
  /** JSON array of the job's error sample. */
  errors: string
  /** Milliseconds since the epoch; the entry is deleted a while after (see importJobLimits.ledgerKeepMs). */
  updated_at: number
}

/** One chunk a job holds: what it answered, for a resent copy. */
export interface LedgerChunkRow {
  job_id: string
  /** The chunk's identity: a hash of what was sent (see chunkKey). */
  chunk: string
  /** 1-based: the order in which the job's chunks landed. */
  seq: number
  /** JSON of the chunk's outcome (LandedChunk). */
  outcome: string
}

// Names no collection can take (collection names begin with a letter) and that no derived object has.
const jobsTable = '_plinth_import_jobs'
const chunksTable = '_plinth_import_chunks'
type Tables = { _plinth_import_jobs: LedgerJobRow; _plinth_import_chunks: LedgerChunkRow }

/**
 * SQL for the import ledger: two tables in each database that takes import jobs' rows (a project's own
 * database, or a registered binding), created there on first use. The records module is their only owner.
 * Every write happens in the caller's transaction, the one that stores the chunk's rows.
 */
export function createImportLedgerStore() {
  const ready = new WeakMap<Kysely<any>, Promise<void>>()

  async function create(handle: DbHandle): Promise<void> {
    await handle.db.transaction().execute(async (trx) => {
      // Instances creating the tables at once on PostgreSQL would collide on the catalog: one at a time.
      await lockTransaction(trx, handle.kind, 'import-ledger')
      await trx.schema
        .createTable(jobsTable)
        .ifNotExists()
        .addColumn('job_id', 'text', (c) => c.primaryKey())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('imported', 'bigint', (c) => c.notNull())
        .addColumn('failed', 'bigint', (c) => c.notNull())
        .addColumn('chunks', 'integer', (c) => c.notNull())
        .addColumn('errors', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await trx.schema.createIndex(`${jobsTable}_updated`).ifNotExists().on(jobsTable).column('updated_at').execute()
      await trx.schema
        .createTable(chunksTable)
        .ifNotExists()
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('chunk', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${chunksTable}_pkey`, ['job_id', 'chunk'])
        .execute()
    })
  }

  return {
    /** Creates the ledger tables in the handle's database when missing (once per handle and process). */
    async ensure(handle: DbHandle): Promise<void> {
      let done = ready.get(handle.db)
      if (!done) {
        done = create(handle)
        ready.set(handle.db, done)
        done.catch(() => ready.delete(handle.db))
      }
      await done
    },

    /** The job's entry as it stands, without waiting for writers; undefined before its first chunk or finalize. */
    async read(db: Kysely<any>, jobId: string): Promise<LedgerJobRow | undefined> {
      return (db as Kysely<Tables>).selectFrom(jobsTable).selectAll().where('job_id', '=', jobId).executeTakeFirst()
    },

    /**
     * Locks the job for the rest of the transaction (chunks and finalize of one job take turns, on every
     * instance) and answers its entry, made from `seed` when it has none yet.
     */
    async lock(trx: Kysely<any>, kind: DbKind, seed: LedgerJobRow): Promise<LedgerJobRow> {
      await lockTransaction(trx, kind, `import-job:${seed.job_id}`)
      const db = trx as Kysely<Tables>
      await db
        .insertInto(jobsTable)
        .values(seed)
        .onConflict((oc) => oc.column('job_id').doNothing())
        .execute()
      return db.selectFrom(jobsTable).selectAll().where('job_id', '=', seed.job_id).executeTakeFirstOrThrow()
    },

    /** The chunk of the job with this identity, or undefined. */
    async chunk(db: Kysely<any>, jobId: string, chunk: string): Promise<LedgerChunkRow | undefined> {
      return (db as Kysely<Tables>)
        .selectFrom(chunksTable)
        .selectAll()
        .where('job_id', '=', jobId)
        .where('chunk', '=', chunk)
        .executeTakeFirst()
    },

    /** Records a chunk and the job's entry after it. Run under `lock`, in the transaction of the chunk's rows. */
    async addChunk(trx: Kysely<any>, chunk: LedgerChunkRow, after: LedgerJobRow): Promise<void> {
      const db = trx as Kysely<Tables>
      await db.insertInto(chunksTable).values(chunk).execute()
      await db.updateTable(jobsTable).set(after).where('job_id', '=', after.job_id).execute()
    },

    /** Marks the job complete. Run under `lock`. */
    async complete(trx: Kysely<any>, jobId: string, updatedAt: number): Promise<void> {
      await (trx as Kysely<Tables>)
        .updateTable(jobsTable)
        .set({ status: 'complete', updated_at: updatedAt })
        .where('job_id', '=', jobId)
        .execute()
    },

    /** Deletes the entries (and chunks) of jobs unchanged since `before`; returns how many jobs. */
    async deleteStale(db: Kysely<any>, before: number): Promise<number> {
      return (db as Kysely<Tables>).transaction().execute(async (trx) => {
        const stale = trx.selectFrom(jobsTable).select('job_id').where('updated_at', '<', before)
        await trx.deleteFrom(chunksTable).where('job_id', 'in', stale).execute()
        const result = await trx.deleteFrom(jobsTable).where('updated_at', '<', before).executeTakeFirst()
        return Number(result.numDeletedRows)
      })
    },
  }
}

export type ImportLedgerStore = ReturnType<typeof createImportLedgerStore>
