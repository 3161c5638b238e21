import { AppError } from '../../../lib/errors.js'
import { FieldValueError, fieldTypeOf, type FieldDef } from '../field-types/index.js'
import { idsShown, type FieldRows } from './field-rows.js'

/** What checking every row's value against a field's new definition found. */
export interface Conversion {
  /** Rows whose value the new definition refuses: how many, the first ids (id order), the first reason. */
  readonly refused: number
  readonly ids: string[]
  readonly reason: string | null
  /** Rows whose stored value changes (e.g. a UUID put in its canonical form), with the value to write. */
  readonly updates: [string, unknown][]
}

/**
 * Reads each row's value as `from` reads it and writes it as `to` would (its type's format and
 * `validationRules`, as a record write checks them); nothing is written here.
 */
export async function convertRows(rows: FieldRows, from: FieldDef, to: FieldDef): Promise<Conversion> {
  const type = fieldTypeOf(to.type)
  const ids: string[] = []
  const updates: [string, unknown][] = []
  let refused = 0
  let reason: string | null = null
  await rows.scan(from, null, (id, value) => {
    try {
      const written = type.write(value, to)
      if (JSON.stringify(written) !== JSON.stringify(value)) updates.push([id, written])
    } catch (err) {
      if (!(err instanceof FieldValueError)) throw err
      refused += 1
      if (ids.length < idsShown) ids.push(id)
      reason ??= err.message
    }
  })
  return { refused, ids, reason, updates }
}

/**
 * The 409 of a change the rows do not allow: how many records, the ids of the first 20, what to do; the
 * whole PATCH is rolled back. `extra` adds details (e.g. how many values are shared).
 */
export function rowsConflict(
  field: string,
  records: number,
  ids: readonly string[],
  what: string,
  todo: string,
  extra: Record<string, unknown> = {},
): AppError {
  const shown = ids.length < records ? `the first ${ids.length}: ` : ''
  return new AppError(
    'conflict',
    `Field "${field}": ${records} record${records === 1 ? '' : 's'} ${what} (${shown}${ids.join(', ')}); ${todo}; nothing was changed`,
    { field, records, ids, ...extra },
  )
}
