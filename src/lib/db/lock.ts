import { sql, type Kysely } from 'kysely'
import type { DbKind } from './handle.js'

/**
 * Serialises a critical section across instances, inside a transaction (released at commit).
 * PostgreSQL takes an advisory lock; SQLite needs none, its write transactions already exclude each other.
 */
export async function lockTransaction(trx: Kysely<any>, kind: DbKind, name: string): Promise<void> {
  if (kind === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`plinth:${name}`}))`.execute(trx)
}
