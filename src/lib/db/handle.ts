import { sql, type Kysely, type RawBuilder } from 'kysely'

export type DbKind = 'sqlite' | 'postgres'

/** A database a module works in: the system database, a project's own, or a registered binding. */
export interface DbHandle {
  readonly kind: DbKind
  /** Kysely bound to the right file (SQLite) or schema (PostgreSQL). */
  readonly db: Kysely<any>
  /** The PostgreSQL schema the handle is bound to; null for SQLite. */
  readonly schema: string | null
  /**
   * Which copy of a collection's data the handle reads when there are several (r2_sql: a working copy or a
   * published version, decision 036); cached totals and ETags are keyed by it. Absent for one copy.
   */
  readonly copy?: string
}

/**
 * A table name for raw SQL on this handle: schema-qualified on PostgreSQL, where Kysely's `withSchema`
 * reaches only query-builder tables, not identifiers inside `sql` templates.
 */
export function tableIdentifier(handle: DbHandle, table: string): RawBuilder<unknown> {
  return handle.schema ? sql.id(handle.schema, table) : sql.id(table)
}

/**
 * An index column that serves the keyset order of lists (nulls smallest; text by code point): SQLite's
 * default order already is; PostgreSQL needs NULLS FIRST, and COLLATE "C" on text.
 */
export function orderedIndexColumn(handle: DbHandle, column: string, text: boolean): RawBuilder<unknown> {
  if (handle.kind === 'sqlite') return sql.id(column)
  return text ? sql`${sql.id(column)} collate "C" nulls first` : sql`${sql.id(column)} nulls first`
}
