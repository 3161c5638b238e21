import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { AppError } from '../errors.js'
import { guardedSocket } from '../outbound/index.js'
import { translatingDialect } from './translating-dialect.js'

const INT8_OID = 20

// Timestamps and counters are int8; they fit a JS number (Unix seconds, row counts).
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
}

export interface PgPoolOptions {
  readonly max?: number
  /** Every connection goes through the outbound-address guard (a binding that may not reach private addresses). */
  readonly guarded?: boolean
}

/** One pool per PostgreSQL server; every schema on it shares the pool. */
export function createPgPool(url: string, onIdleError: (err: Error) => void, options: PgPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    types,
    connectionTimeoutMillis: 10_000,
    // The socket resolves the host itself and checks what it connects to; TLS still verifies the host name.
    ...(options.guarded ? { stream: guardedSocket } : {}),
  })
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', onIdleError)
  return pool
}

/** Kysely over a pool; the caller scopes it to a schema with `withSchema`. */
export function openPostgres(pool: pg.Pool): Kysely<any> {
  return new Kysely<any>({ dialect: translatingDialect(new PostgresDialect({ pool })) })
}

/** Creates the schema when missing. Names are checked by the caller (identifiers, not values). */
export async function ensureSchema(db: Kysely<any>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db)
  } catch (err) {
    // Two instances creating it at once: the loser sees a unique violation on pg_namespace. It exists now.
    if (!(err instanceof AppError && err.code === 'already_exists')) throw err
  }
}
