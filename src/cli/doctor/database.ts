import Database from 'better-sqlite3'
import { accessSync, constants, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import pg from 'pg'
import type { Config } from '../../config.js'
import { systemMigrations } from '../../migrations/system/index.js'
import { checkTimeoutMs, describeNetworkError, fail, ok, warn, where, type CheckResult } from './check.js'

/** The database: SQLite (DATA_DIR writable, migration level) or PostgreSQL (a connection, migration level). */
export async function checkDatabase(config: Config): Promise<CheckResult> {
  if (config.database.kind === 'sqlite') return checkSqlite(config.dataDir)
  return checkPostgres(config.database.url)
}

function checkSqlite(dataDir: string): CheckResult {
  const target = existsSync(dataDir) ? dataDir : dirname(dataDir)
  try {
    accessSync(target, constants.W_OK | constants.X_OK)
  } catch {
    return fail(
      'database',
      existsSync(dataDir)
        ? `DATA_DIR (${dataDir}) is not writable by this user: give the server's user ownership of it`
        : `DATA_DIR (${dataDir}) does not exist and ${target} is not writable, so it cannot be created: create it for the server's user`,
    )
  }
  const file = join(dataDir, 'system.db')
  if (!existsSync(file)) return ok('database', `SQLite in ${dataDir}: writable; no database yet (made at first start)`)
  let applied: string[]
  try {
    applied = readSqliteMigrations(file)
  } catch (err) {
    return fail('database', `${file} cannot be read: ${(err as Error).message}`)
  }
  return level('database', `SQLite in ${dataDir}: writable`, applied)
}

function readSqliteMigrations(file: string): string[] {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    const has = db.prepare("select 1 from sqlite_schema where type = 'table' and name = 'plinth_migrations'").get()
    return has ? (db.prepare('select name from plinth_migrations').pluck().all() as string[]) : []
  } finally {
    db.close()
  }
}

async function checkPostgres(url: string): Promise<CheckResult> {
  const at = `PostgreSQL at ${where(url, 5432, true)}`
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: checkTimeoutMs,
    query_timeout: checkTimeoutMs,
  })
  // A connection lost later must not crash the check.
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (err) {
    await client.end().catch(() => {})
    return fail('database', `cannot connect to ${at}: ${describePgError(err)}`)
  }
  try {
    const { rows } = await client.query<{ name: string }>('select name from plinth.plinth_migrations')
    return level(
      'database',
      `${at}: connected`,
      rows.map((r) => r.name),
    )
  } catch (err) {
    // 42P01 undefined table, 3F000 undefined schema: nothing was ever started on this database.
    const code = (err as { code?: string }).code
    if (code === '42P01' || code === '3F000')
      return ok('database', `${at}: connected; no Plinth tables yet (made at first start)`)
    return fail('database', `${at}: connected, but reading the migrations failed: ${describePgError(err)}`)
  } finally {
    await client.end().catch(() => {})
  }
}

/** PostgreSQL's own words for what it refused (they name the user or database, never the password); else the network cause. */
function describePgError(err: unknown): string {
  const code = (err as { code?: unknown }).code
  // SQLSTATE codes are five characters; 28P01 / 28000: authentication, 3D000: no such database.
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const hint =
      code === '28P01' || code === '28000'
        ? ' (check the user and password in DATABASE_URL)'
        : code === '3D000'
          ? ' (create the database, or fix its name in DATABASE_URL)'
          : ''
    return `${(err as Error).message}${hint}`
  }
  return describeNetworkError(err)
}

/** Compares the applied migrations with this build's. */
function level(name: string, prefix: string, applied: readonly string[]): CheckResult {
  const known = new Set(systemMigrations.map((m) => m.name))
  const unknown = applied.filter((n) => !known.has(n))
  if (unknown.length > 0) {
    return fail(
      name,
      `${prefix}; the database has migrations this Plinth does not know (${unknown.sort().at(-1)}): it was run by a newer version, run that one`,
    )
  }
  const pending = systemMigrations.length - applied.length
  if (applied.length === 0) return ok(name, `${prefix}; no migrations applied yet (made at first start)`)
  if (pending > 0) {
    return warn(
      name,
      `${prefix}; ${pending} migrations pending: plinth serve applies them at start (or run plinth migrate)`,
    )
  }
  return ok(name, `${prefix}; migrations up to date (${applied.length})`)
}
