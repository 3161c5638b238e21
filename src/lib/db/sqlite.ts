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
  const transactions = new TransactionWatch()
  const db = new Kysely<any>({
    dialect: translatingDialect(new ImmediateSqliteDialect({ database: statements }, transactions)),
    plugins: [new SqliteValuesPlugin()],
  })
  const runDirect = (query: CompiledQuery): unknown[] | Promise<unknown[]> => {
    try {
      const stmt = cache.prepare(query.sql) as unknown as Database.Statement
      return group.run(
        () => (stmt.reader ? (stmt.all(query.parameters) as unknown[]) : (stmt.run(query.parameters), [])),
        stmt.readonly,
      )
    } catch (err) {
      throw translateDbError(err)
    }
  }
  direct.set(db, (query) => {
    if (!raw.inTransaction || group.open) return runDirect(query)
    // Inside another caller's open transaction the statement would see (and join) its uncommitted
    // writes. Wait for that transaction to end, then join a group as usual: taking Kysely's way instead
    // (its connection mutex) would commit the statement alone, and that commit costs more than the
    // statement (runs' starts, while the run writer's batch is open, were nearly half of them).
    // One wait only: if another transaction holds the connection by then, Kysely's queue decides.
    const ended = transactions.ended()
    if (!ended) return null
    return ended.then(() =>
      raw.inTransaction && !group.open ? db.executeQuery(query).then((r) => r.rows as unknown[]) : runDirect(query),
    )
  })
  return db
}

/** Tells when the Kysely transaction open on the connection ends (committed or rolled back). */
class TransactionWatch {
  #end: { promise: Promise<void>; resolve: () => void } | null = null
  begun(): void {
    let resolve!: () => void
    const promise = new Promise<void>((r) => (resolve = r))
    this.#end = { promise, resolve }
  }
  finished(): void {
    const end = this.#end
    this.#end = null
    end?.resolve()
  }
  /** Settles when the open transaction ends; null when none was begun through Kysely. */
  ended(): Promise<void> | null {
    return this.#end?.promise ?? null
  }
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
  readonly #watch: TransactionWatch
  constructor(config: SqliteDialectConfig, watch: TransactionWatch) {
    super(config)
    this.#config = config
    this.#watch = watch
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#watch)
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #watch: TransactionWatch
  constructor(config: SqliteDialectConfig, watch: TransactionWatch) {
    super(config)
    this.#watch = watch
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
    this.#watch.begun()
  }
  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.commitTransaction(connection)
    } finally {
      this.#watch.finished()
    }
  }
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection)
    } finally {
      this.#watch.finished()
    }
  }
}
