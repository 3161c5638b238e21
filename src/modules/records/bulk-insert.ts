import { sql, type CompiledQuery, type Kysely } from 'kysely'
import type { DbKind } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import type { Row } from './store.js'

// Bound parameters per statement stay well under both dialects' limits (SQLite 32,766, PostgreSQL 65,535).
const maxParameters = 30_000
const maxRowsPerStatement = 256
// Values per `in (…)` list when looking for values already taken.
const lookupChunk = 500

type Db = Kysely<Record<string, Row>>

/** A kv collection's table (decision 035): what reads select from, what RETURNING lists, how a row is packed. */
export interface BulkDocument {
  readonly source: unknown
  readonly returning: readonly unknown[]
  pack(row: Row): Row
}

/**
 * The batch write path of imports: multi-row INSERT … RETURNING statements into one collection's table,
 * compiled by Kysely once per column list and row count and afterwards only re-bound. Rows are split into
 * full statements plus power-of-two remainders, so a column list needs at most a handful of statements. It
 * runs inside the caller's transaction; the table's own machinery (unique indexes, SQLite's full-text
 * triggers, PostgreSQL's generated search column) applies as to any insert.
 */
export function createBulkInserter(kind: DbKind, table: string, document: BulkDocument | null = null) {
  const statements = new Map<string, CompiledQuery<Row>>()
  const source = document ? document.source : table
  // A compiled query is bound as is, past the connection's plugins: convert booleans as SQLite's does.
  const bind = kind === 'sqlite' ? (v: unknown) => (typeof v === 'boolean' ? Number(v) : v) : (v: unknown) => v

  function parametersOf(columns: readonly string[], rows: readonly Row[]): unknown[] {
    const out: unknown[] = new Array(columns.length * rows.length)
    let i = 0
    for (const row of rows) for (const column of columns) out[i++] = bind(row[column] ?? null)
    return out
  }

  function statementFor(db: Db, columns: readonly string[], rows: readonly Row[]): CompiledQuery<Row> {
    const key = `${columns.join(',')}:${rows.length}`
    let compiled = statements.get(key)
    if (!compiled) {
      const values = rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? null])))
      const insert = db.insertInto(table).values(values)
      compiled = (
        document ? insert.returning(document.returning as never) : insert.returningAll()
      ).compile() as CompiledQuery<Row>
      // Re-binding assumes Kysely lays parameters out row by row in column order; check it once.
      const expected = parametersOf(columns, rows)
      if (compiled.parameters.length !== expected.length || compiled.parameters.some((p, i) => p !== expected[i])) {
        throw new Error(`bulk insert into ${table}: unexpected parameter layout`)
      }
      if (statements.size >= 64) statements.clear()
      statements.set(key, compiled)
    }
    return compiled
  }

  /** Row counts per statement: full statements, then the remainder as powers of two. */
  function pieces(count: number, columns: number): number[] {
    const size = Math.max(1, Math.min(maxRowsPerStatement, Math.floor(maxParameters / columns)))
    const out: number[] = []
    let left = count
    while (left >= size) {
      out.push(size)
      left -= size
    }
    for (let bit = 1 << 30; bit > 0; bit >>= 1) if (left & bit) out.push(bit)
    return out
  }

  async function run(db: Db, fieldColumns: readonly string[], fieldRows: readonly Row[]): Promise<Row[]> {
    // A kv row's fields go into its document: the statement inserts the system columns and `doc`.
    const rows = document
      ? fieldRows.map((row) => document.pack(Object.fromEntries(fieldColumns.map((c) => [c, row[c] ?? null]))))
      : fieldRows
    const columns = document ? Object.keys(rows[0] ?? {}) : fieldColumns
    const compiled = statementFor(db, columns, rows)
    const result = await db.executeQuery<Row>({ ...compiled, parameters: parametersOf(columns, rows) })
    return result.rows
  }

  return {
    /**
     * Inserts rows, each holding every one of `columns` (null for none), and returns them as stored, in
     * input order. Any failure (already_exists on a unique value) fails the whole call: run it in a
     * transaction. Throws already_exists and the other translated database errors.
     */
    async insert(db: Kysely<any>, columns: readonly string[], rows: readonly Row[]): Promise<Row[]> {
      const stored: Row[] = []
      let at = 0
      for (const count of pieces(rows.length, columns.length)) {
        const slice = rows.slice(at, at + count)
        at += count
        // RETURNING order is not promised by either database: match the rows back by id.
        const byId = new Map((await run(db as Db, columns, slice)).map((r) => [String(r.id), r]))
        for (const row of slice) {
          const found = byId.get(String(row.id))
          if (!found) throw new AppError('internal', 'An inserted row was not returned')
          stored.push(found)
        }
      }
      return stored
    },

    /**
     * Inserts rows one by one, each inside its own savepoint, so a row the database refuses (a unique
     * value another writer took meanwhile) is rolled back alone. Returns each row as stored, or the client
     * error (4xx AppError) that refused it; any other error is thrown. Run it in a transaction.
     */
    async insertEach(db: Kysely<any>, columns: readonly string[], rows: readonly Row[]): Promise<(Row | AppError)[]> {
      const out: (Row | AppError)[] = []
      for (const row of rows) {
        await sql`savepoint plinth_import_row`.execute(db)
        try {
          const [stored] = await run(db as Db, columns, [row])
          await sql`release savepoint plinth_import_row`.execute(db)
          out.push(stored!)
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err
          await sql`rollback to savepoint plinth_import_row`.execute(db)
          await sql`release savepoint plinth_import_row`.execute(db)
          out.push(err)
        }
      }
      return out
    },

    /** Which of `values` some row of the table (soft-deleted ones included) holds in `column` already. */
    async taken(db: Kysely<any>, column: string, values: readonly unknown[]): Promise<unknown[]> {
      const found: unknown[] = []
      for (let i = 0; i < values.length; i += lookupChunk) {
        const slice = values.slice(i, i + lookupChunk).map(bind)
        const rows = await (db as Db)
          .selectFrom(source as string)
          .select(column)
          .where(column, 'in', slice)
          .execute()
        for (const row of rows) found.push(row[column])
      }
      return found
    },
  }
}

export type BulkInserter = ReturnType<typeof createBulkInserter>
