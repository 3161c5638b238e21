import type { Kysely } from 'kysely'

export type DbKind = 'sqlite' | 'postgres'

/** A database a module works in: the system database, a project's own, or a registered binding. */
export interface DbHandle {
  readonly kind: DbKind
  /** Kysely bound to the right file (SQLite) or schema (PostgreSQL). */
  readonly db: Kysely<any>
}
