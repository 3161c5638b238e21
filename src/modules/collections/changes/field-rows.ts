import { sql } from 'kysely'
import type { DbHandle } from '../../../lib/db/index.js'
import { AppError, isAppError } from '../../../lib/errors.js'
import type { CompoundIndex } from '../definition/index.js'
import { documentSet, documentSource, fieldExpression } from '../document-table.js'
import {
  changeColumnType,
  createUniqueIndex,
  lockTableWrites,
  makeColumnNullable,
  type TableShape,
} from '../field-column.js'
import { dropUniqueIndex } from '../ddl-indexes.js'
import { fieldTypeOf, type FieldDef } from '../field-types/index.js'
import type { TableLayout } from '../table-layout.js'

/** Rows read and written per round trip: bounded memory whatever the table's size. */
const pageSize = 500

/** How many record ids a refusal names. */
export const idsShown = 20

/** Rows that share a value of a field with another row: how many, how many values, the first ids. */
export interface Duplicates {
  readonly records: number
  readonly values: number
  readonly ids: string[]
}

/**
 * The rows of a collection as a schema change sees them: every row, soft-deleted ones too (they can be
 * restored, so their values must stay valid), on either layout (columns or a `kv` document).
 */
export interface FieldRows {
  /**
   * Visits, in pages by id, each row whose value of `def` is one of `only` (or, with null, is not null),
   * with the value as the field type reads it. `def` may be the field as it was (a type change reads the
   * old values with the old type).
   */
  scan(def: FieldDef, only: readonly string[] | null, visit: (id: string, value: unknown) => void): Promise<void>
  /** Writes values (as a write of the field type returns them) by id; each row's version and updatedAt move on. */
  write(def: FieldDef, updates: readonly (readonly [id: string, value: unknown])[]): Promise<void>
  /** How many rows hold no value of `def`. */
  countNull(def: FieldDef): Promise<number>
  /** Gives `value` (as a write of the field type returns it) to every row with no value of `def`. */
  fillNull(def: FieldDef, value: unknown): Promise<void>
  /** Lets the field's column hold no value (a `kv` document needs nothing). */
  makeNullable(def: FieldDef): Promise<void>
  /** Holds off other writers of the table until the change's transaction ends (PostgreSQL). */
  lockWrites(): Promise<void>
  /** Gives the field's column (or its indexes' expressions) the type `after` declares; values already checked. */
  changeType(before: FieldDef, after: FieldDef): Promise<void>
  /** The rows whose value of `def` another row holds too (ids in id order, the first 20). */
  duplicates(def: FieldDef): Promise<Duplicates>
  /** Makes (rows checked first) or drops the field's unique index. */
  setUnique(def: FieldDef, unique: boolean): Promise<void>
}

/** The rows of `table` through `handle` (a transaction's, for a change that must be atomic). */
export function fieldRows(
  handle: DbHandle,
  table: string,
  layout: TableLayout,
  fields: readonly FieldDef[],
  now: number,
  indexes: readonly CompoundIndex[] = [],
): FieldRows {
  const shape: TableShape = { table, layout, fields, indexes }
  // A document is read through its fields' expressions: the field's as `def` has it.
  const sourceOf = (def: FieldDef) =>
    layout === 'document'
      ? documentSource(
          handle,
          table,
          fields.map((f) => (f.name === def.name ? def : f)),
        )
      : table
  const stored = (def: FieldDef, value: unknown) =>
    fieldTypeOf(def.type).valueKind(def) === 'json' ? JSON.stringify(value) : value
  const setValue = (def: FieldDef, value: unknown) => {
    const system = { _version: sql`_version + 1`, updated_at: now }
    const set = { ...system, [def.name]: stored(def, value) }
    return layout === 'document' ? documentSet(handle.kind, fields, set) : set
  }
  const valueOf = (def: FieldDef) => (layout === 'document' ? fieldExpression(handle.kind, def) : sql.ref(def.name))
  return {
    async scan(def, only, visit) {
      if (only !== null && only.length === 0) return
      const type = fieldTypeOf(def.type)
      let after: string | null = null
      for (;;) {
        let query = handle.db
          .selectFrom(sourceOf(def) as string)
          .select(['id', def.name])
          .where(def.name, only === null ? 'is not' : 'in', only ?? null)
        if (after !== null) query = query.where('id', '>', after)
        const page = (await query.orderBy('id').limit(pageSize).execute()) as Record<string, unknown>[]
        for (const row of page) visit(String(row.id), type.read(row[def.name], def, handle.kind))
        if (page.length < pageSize) return
        after = String(page[page.length - 1]?.id)
      }
    },
    async write(def, updates) {
      await distinct(def, async () => {
        for (const [id, value] of updates)
          await handle.db.updateTable(table).set(setValue(def, value)).where('id', '=', id).execute()
      })
    },
    async countNull(def) {
      const row = await handle.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where(valueOf(def), 'is', null)
        .executeTakeFirst()
      return Number(row?.n ?? 0)
    },
    async fillNull(def, value) {
      await distinct(def, () =>
        handle.db.updateTable(table).set(setValue(def, value)).where(valueOf(def), 'is', null).execute(),
      )
    },
    async makeNullable(def) {
      await makeColumnNullable(handle, shape, def.name)
    },
    lockWrites: () => lockTableWrites(handle, table),
    changeType: (before, after) => changeColumnType(handle, shape, before, after),
    async duplicates(def) {
      const source = sourceOf(def) as string
      const shared = handle.db
        .selectFrom(source)
        .select(def.name)
        .where(def.name, 'is not', null)
        .groupBy(def.name)
        .having((eb) => eb.fn.countAll(), '>', 1)
      const counted = await handle.db
        .selectFrom(shared.as('shared'))
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst()
      const values = Number(counted?.n ?? 0)
      if (values === 0) return { records: 0, values: 0, ids: [] }
      const held = handle.db.selectFrom(source).where(def.name, 'in', shared)
      const total = await held.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst()
      const first = await held.select('id').orderBy('id').limit(idsShown).execute()
      return { records: Number(total?.n ?? 0), values, ids: first.map((r) => String(r.id)) }
    },
    async setUnique(def, unique) {
      if (unique) await createUniqueIndex(handle, shape, def)
      else await dropUniqueIndex(handle.db, handle, table, def.name)
    },
  }
}

/** A unique field's rows rewritten onto a value another row holds: the change is refused, not a database error. */
async function distinct(def: FieldDef, run: () => Promise<unknown>): Promise<void> {
  try {
    await run()
  } catch (err) {
    if (!isAppError(err) || err.code !== 'already_exists') throw err
    throw new AppError(
      'conflict',
      `Field "${def.name}" is unique: the change would give records the same value; nothing was changed`,
      { field: def.name },
    )
  }
}
