import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import {
  CompiledQuery,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type SqliteDialectConfig,
  type SqliteStatement,
} from 'kysely'
import { SqliteValuesPlugin } from './sqlite-values-plugin.js'
import { translateDbError } from './translate-error.js'
import { translatingDialect } from './translating-dialect.js'
import { createWriteGroup } from './write-group.js'

const statementCacheSize = 500

/**
 * Opens an SQLite file through Kysely: WAL, synchronous=NORMAL, a busy timeout, foreign keys on,
 * planner statistics refreshed, and prepared statements reused across queries (Kysely's own driver prepares every time).
 */
export function openSqlite(file: string, options: { readonly?: boolean } = {}): Kysely<any> {
  if (file !== ':memory:' && !options.readonly) mkdirSync(dirname(file), { recursive: true })
  // Read-only (a published r2_sql file, decision 036): nothing is written to the file, not even the
  // journal mode or statistics; a write through it fails rather than changing a shared copy.
  const raw = new Database(file, options.readonly ? { readonly: true, fileMustExist: true } : {})
  // The busy timeout first: switching to WAL needs a lock another process may hold.
  raw.pragma('busy_timeout = 5000')
  raw.pragma('foreign_keys = ON')
  if (!options.readonly) {
    raw.pragma('journal_mode = WAL')
    raw.pragma('synchronous = NORMAL')
    // Planner statistics (decision 024): ANALYZE reads at most about this many rows of each index, so
    // `optimize` stays cheap on large tables; on open it checks every table (0x10000), not just those this
    // connection has used, and analyzes those whose statistics are missing or out of date.
    raw.pragma('analysis_limit = 1000')
    raw.pragma('optimize = 0x10002')
  }
  const cache = withStatementCache(raw)
  const group = createWriteGroup(raw)
  // Kysely's statements (and transactions) never run inside a write group: commit it first.
  const statements: SqliteDatabase = {
    close: () => {
      group.flush()
      cache.close()
    },
    prepare: (sql) => {
      group.flush()
      return cache.prepare(sql)
    },
  }
  const db = new Kysely<any>({
    dialect: translatingDialect(new ImmediateSqliteDialect({ database: statements })),
    plugins: [new SqliteValuesPlugin()],
  })
  direct.set(db, (query) => {
    // Inside another caller's open transaction the statement would see (and join) its uncommitted
    // writes: that caller holds Kysely's connection mutex, so wait for it the ordinary way.
    if (raw.inTransaction && !group.open) return null
    try {
      const stmt = cache.prepare(query.sql) as unknown as Database.Statement
      return group.run(() => (stmt.reader ? (stmt.all(query.parameters) as unknown[]) : (stmt.run(query.parameters), [])), stmt.readonly)
    } catch (err) {
      throw translateDbError(err)
    }
  })
  return db
}

type DirectRun = (query: CompiledQuery) => unknown[] | Promise<unknown[]> | null
const direct = new WeakMap<Kysely<any>, DirectRun>()

/**
 * Runs a compiled query and answers its rows. On SQLite, unless another caller's transaction is open on
 * the connection, the statement runs straight on it: better-sqlite3 is synchronous, so nothing can
 * interleave, and Kysely's connection mutex, executor and plugin passes (a large share of a small query's
 * cost) are skipped; writes share commits (write-group.ts). Values must already be bindable (SQLite: no
 * booleans). Elsewhere, through Kysely.
 */
export async function runCompiled<R>(db: Kysely<any>, query: CompiledQuery<R>): Promise<R[]> {
  const rows = direct.get(db)?.(query)
  if (rows) {
    try {
      return (await rows) as R[]
    } catch (err) {
      throw translateDbError(err)
    }
  }
  return (await db.executeQuery<R>(query)).rows
}

/** Exported for its test; `openSqlite` is the way in. */
export function withStatementCache(db: Database.Database): SqliteDatabase {
  const cache = new Map<string, Database.Statement>()
  return {
    close: () => {
      cache.clear()
      db.close()
    },
    prepare(sql: string): SqliteStatement {
      const hit = cache.get(sql)
      // A statement still iterating (a streamed select) cannot run again; prepare a fresh one.
      if (hit && !hit.busy) return hit as unknown as SqliteStatement
      const stmt = db.prepare(sql)
      if (!hit) {
        if (cache.size >= statementCacheSize) cache.delete(cache.keys().next().value as string)
        cache.set(sql, stmt)
      }
      return stmt as unknown as SqliteStatement
    },
  }
}

/**
 * Transactions take the write lock up front (BEGIN IMMEDIATE). A deferred transaction that reads and then
 * writes fails at once with SQLITE_BUSY when another process wrote in between; the busy timeout never
 * applies to that upgrade. Within one process the driver's mutex already serialises transactions.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig
  constructor(config: SqliteDialectConfig) {
    super(config)
    this.#config = config
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config)
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}
