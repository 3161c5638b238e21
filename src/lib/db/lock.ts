import { sql, type Kysely } from 'kysely'
import type { DbKind } from './handle.js'

/**
 * Serialises a critical section across instances, inside a transaction (released at commit).
 * PostgreSQL takes an advisory lock; SQLite needs none, its write transactions already exclude each other.
 */
export async function lockTransaction(trx: Kysely<any>, kind: DbKind, name: string): Promise<void> {
  if (kind === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`plinth:${name}`}))`.execute(trx)
}

const held = new Map<string, Promise<void>>()

/**
 * Runs `work` while holding a named lock that spans several transactions (and databases): in this process
 * a queue per name; on PostgreSQL also a session advisory lock, which the database releases when the holder's
 * connection ends, so a killed instance never leaves it taken. SQLite is served by one process, so the
 * in-process queue is the whole lock there. `queue` names the in-process queue when it should be wider than
 * `name` (one queue for many names keeps a process to one held connection while it waits).
 */
export async function withNamedLock<T>(
  db: Kysely<any>,
  kind: DbKind,
  name: string,
  work: () => Promise<T>,
  queue: string = name,
): Promise<T> {
  const before = held.get(queue) ?? Promise.resolve()
  let release!: () => void
  const mine = new Promise<void>((resolve) => {
    release = resolve
  })
  const tail = before.then(() => mine)
  held.set(queue, tail)
  await before
  try {
    if (kind !== 'postgres') return await work()
    const key = `plinth:${name}`
    return await db.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(hashtext(${key}))`.execute(connection)
      try {
        return await work()
      } finally {
        await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(connection)
      }
    })
  } finally {
    release()
    if (held.get(queue) === tail) held.delete(queue)
  }
}
