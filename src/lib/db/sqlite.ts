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
import { translatingDialect } from './translating-dialect.js'

const statementCacheSize = 500

/**
 * Opens an SQLite file through Kysely: WAL, synchronous=NORMAL, a busy timeout, foreign keys on,
 * and prepared statements reused across queries (Kysely's own driver prepares every time).
 */
export function openSqlite(file: string): Kysely<any> {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  const raw = new Database(file)
  // The busy timeout first: switching to WAL needs a lock another process may hold.
  raw.pragma('busy_timeout = 5000')
  raw.pragma('journal_mode = WAL')
  raw.pragma('synchronous = NORMAL')
  raw.pragma('foreign_keys = ON')
  return new Kysely<any>({
    dialect: translatingDialect(new ImmediateSqliteDialect({ database: withStatementCache(raw) })),
    plugins: [new SqliteValuesPlugin()],
  })
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
