import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely'
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
  raw.pragma('journal_mode = WAL')
  raw.pragma('synchronous = NORMAL')
  raw.pragma('busy_timeout = 5000')
  raw.pragma('foreign_keys = ON')
  return new Kysely<any>({
    dialect: translatingDialect(new SqliteDialect({ database: withStatementCache(raw) })),
    plugins: [new SqliteValuesPlugin()],
  })
}

function withStatementCache(db: Database.Database): SqliteDatabase {
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
