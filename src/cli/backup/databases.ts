import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * One source database held at a fixed point: a read transaction opened on its own connection, so every
 * page the backup copies and every row counted comes from the same committed state, however long the copy
 * takes and whatever the server commits meanwhile (WAL readers do not block writers).
 */
export interface Snapshot {
  readonly path: string
  /** Rows per table, counted in the snapshot. */
  readonly tables: Record<string, number>
  /** Copies the snapshot to `to` with SQLite's backup API. */
  copyTo(to: string): Promise<void>
  close(): void
}

/** Opens `path` and pins its current committed state (throws when it cannot be read). */
export function openSnapshot(path: string): Snapshot {
  // Not read-only: a read-only connection cannot open a WAL database whose -shm it may not create.
  // Nothing is written through it.
  const db = new Database(path, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 10000')
    db.exec('begin')
    // The first read starts the transaction's snapshot.
    const tables = countRows(db)
    return {
      path,
      tables,
      async copyTo(to) {
        mkdirSync(dirname(to), { recursive: true, mode: 0o700 })
        // Each step reads inside the open transaction, so the copy is the snapshot's, not a restart's.
        await db.backup(to, { progress: () => 1024 })
        // A copy stands alone: no WAL beside it, whoever opens it next.
        const copy = new Database(to, { fileMustExist: true })
        try {
          copy.pragma('journal_mode = DELETE')
        } finally {
          copy.close()
        }
      },
      close() {
        if (db.inTransaction) db.exec('rollback')
        db.close()
      },
    }
  } catch (err) {
    db.close()
    throw err
  }
}

/** Row counts of every table (virtual tables' shadow tables included, SQLite's own left out). */
export function countRows(db: Database.Database): Record<string, number> {
  const names = db
    .prepare(
      "select name from sqlite_schema where type = 'table' and name not like 'sqlite\\_%' escape '\\' and sql not like 'create virtual table%' collate nocase order by name",
    )
    .pluck()
    .all() as string[]
  const tables: Record<string, number> = {}
  for (const name of names) {
    tables[name] = db
      .prepare(`select count(*) from "${name.replaceAll('"', '""')}"`)
      .pluck()
      .get() as number
  }
  return tables
}

/** What a copied database holds, checked: `PRAGMA integrity_check` and its row counts. */
export interface DatabaseCheck {
  /** Empty when the database is whole; otherwise integrity_check's findings (the first ten). */
  readonly problems: string[]
  readonly tables: Record<string, number>
}

/** Opens a copy, runs integrity_check and counts its rows. */
export function checkDatabase(path: string): DatabaseCheck {
  const db = new Database(path, { fileMustExist: true })
  try {
    const findings = db.prepare('pragma integrity_check(10)').pluck().all() as string[]
    const problems = findings.length === 1 && findings[0] === 'ok' ? [] : findings
    return { problems, tables: countRows(db) }
  } finally {
    db.close()
  }
}

/** Tables whose counts differ between `expected` and `actual`, as readable lines. */
export function countDifferences(expected: Record<string, number>, actual: Record<string, number>): string[] {
  const names = new Set([...Object.keys(expected), ...Object.keys(actual)])
  const out: string[] = []
  for (const name of [...names].sort()) {
    if (expected[name] !== actual[name]) {
      out.push(`table ${name}: ${expected[name] ?? 'absent'} rows expected, ${actual[name] ?? 'absent'} found`)
    }
  }
  return out
}

/** The last system migration applied in a system database copy, and how many are. */
export function migrationLevel(systemDb: string): { last: string | null; count: number } {
  const db = new Database(systemDb, { fileMustExist: true })
  try {
    const has = db.prepare("select 1 from sqlite_schema where type = 'table' and name = 'plinth_migrations'").get()
    if (!has) return { last: null, count: 0 }
    const names = db.prepare('select name from plinth_migrations order by name').pluck().all() as string[]
    return { last: names.at(-1) ?? null, count: names.length }
  } finally {
    db.close()
  }
}
