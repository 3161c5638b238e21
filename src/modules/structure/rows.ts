import { sql, type Expression, type SqlBool } from 'kysely'
import { fieldTypeOf } from '../collections/index.js'
import type { Opener } from '../records/index.js'
import type { FieldStructure } from './field-structure.js'
import { enumColumnPredicate, jsonPredicate } from './predicate.js'
import type { RowSource, ScanRow } from './scanner.js'

/** A collection opened for a caller (records.open). */
export type Opened = Awaited<ReturnType<Opener>>

export interface Estimate {
  /** Records excluding soft-deleted ones (within the caller's read scope). */
  readonly total: number
  /** Records the narrowing predicate lets through: never below the number of wrong ones. */
  readonly upperBound: number
  /** False when no predicate could be built (then upperBound is total). */
  readonly narrowed: boolean
}

export interface CandidateRow extends ScanRow {
  readonly version: number
}

/**
 * The rows a scan or repair walks: active rows inside the caller's read scope whose field might be wrong
 * (the narrowing predicate), or, when none can be built, whose field is not null. In id order.
 */
export function candidates(opened: Opened, fs: FieldStructure) {
  const table = opened.collection.name
  const column = sql.ref(`${table}.${fs.def.name}`)
  const predicate =
    fs.kind === 'enum'
      ? enumColumnPredicate(
          column,
          (fs.shape.type === 'enum' ? fs.shape.values : []).map((v) => v.value),
        )
      : jsonPredicate(opened.handle.kind, column, fs.shape)
  const scope = opened.store.where(opened.scope.rows, false)
  const type = fieldTypeOf(fs.def.type)
  const kind = opened.handle.kind

  function query(conditions: readonly Expression<SqlBool>[]) {
    let q = opened.store.selectFrom()
    for (const condition of conditions) q = q.where(condition)
    return q
  }
  const narrowing: Expression<SqlBool> = predicate ?? sql<SqlBool>`${column} is not null`

  function toRow(row: Record<string, unknown>): CandidateRow {
    const raw = row[fs.def.name]
    const bytes = typeof raw === 'string' ? raw.length : (JSON.stringify(raw) ?? '').length
    return {
      id: String(row.id),
      value: raw === null || raw === undefined ? null : type.read(raw, fs.def, kind),
      bytes,
      version: Number(row._version),
    }
  }

  const source: { next(after: string | null, count: number): Promise<CandidateRow[]> } & RowSource = {
    async next(after, count) {
      let q = query([...scope, narrowing]).select(['id', '_version', fs.def.name])
      if (after !== null) q = q.where('id', '>', after)
      const rows = await q.orderBy('id').limit(count).execute()
      return rows.map(toRow)
    },
  }

  return {
    source,
    narrowed: predicate !== null,

    /** One candidate again, as it is now (after a write conflict), or null when it is gone or out of scope. */
    async reread(id: string): Promise<CandidateRow | null> {
      const row = await opened.store.byId(id, opened.scope.rows, false)
      return row ? toRow(row) : null
    },

    async estimate(): Promise<Estimate> {
      const count = async (conditions: readonly Expression<SqlBool>[]) => {
        const row = await query(conditions).select(sql<number>`count(*)`.as('n')).executeTakeFirst()
        return Number(row?.n ?? 0)
      }
      const total = await count(scope)
      return predicate === null
        ? { total, upperBound: total, narrowed: false }
        : { total, upperBound: await count([...scope, predicate]), narrowed: true }
    },
  }
}

export type Candidates = ReturnType<typeof candidates>
