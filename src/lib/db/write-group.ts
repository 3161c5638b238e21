import type Database from 'better-sqlite3'

interface Waiter {
  resolve(rows: unknown[]): void
  reject(err: unknown): void
  rows: unknown[]
}

/**
 * Group commit for one SQLite connection. A write that arrives when no transaction is open begins one
 * (`BEGIN IMMEDIATE`), runs at once, and the transaction commits once the event loop has handled every
 * request it had read (`setImmediate`): all writes of that turn share one commit, whose cost (the WAL
 * append of every touched page) dominates a small write's. Each statement is still atomic on its own
 * (SQLite undoes a failing statement and keeps the transaction), and every statement run while the group
 * is open, reads included, answers only after the commit, so no caller sees or acknowledges data that
 * could still be lost. If the commit fails, every statement of the group fails with its error.
 *
 * Anything else that uses the connection (Kysely's queries and transactions) calls `flush()` first, so
 * its statements never run inside a group.
 */
export function createWriteGroup(raw: Database.Database) {
  let waiters: Waiter[] | null = null

  function settle(err: unknown): void {
    const settled = waiters ?? []
    waiters = null
    for (const w of settled) {
      if (err === undefined) w.resolve(w.rows)
      else w.reject(err)
    }
  }

  function flush(): void {
    if (!waiters) return
    try {
      if (raw.inTransaction) raw.exec('commit')
    } catch (err) {
      if (raw.inTransaction) raw.exec('rollback')
      return settle(err)
    }
    settle(undefined)
  }

  return {
    flush,
    /** True while a group is open: the connection's transaction is ours. */
    get open(): boolean {
      return waiters !== null
    },

    /**
     * Runs `statement` now: inside the open group, or, for a write, in a new one. Answers its rows once the
     * group commits; a read with no group open answers at once. Throws (synchronously) what the statement
     * throws; the rest of the group goes on.
     */
    run(statement: () => unknown[], readonly: boolean): unknown[] | Promise<unknown[]> {
      if (!waiters) {
        if (readonly) return statement()
        raw.exec('begin immediate')
        waiters = []
        setImmediate(flush)
      }
      const group = waiters
      let rows: unknown[]
      try {
        rows = statement()
      } catch (err) {
        // Some failures (I/O, disk full) end the whole transaction: then the group's earlier writes are gone.
        if (!raw.inTransaction) settle(err)
        throw err
      }
      return new Promise((resolve, reject) => group.push({ resolve, reject, rows }))
    },
  }
}

export type WriteGroup = ReturnType<typeof createWriteGroup>
