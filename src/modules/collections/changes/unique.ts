import { rowsConflict } from './convert-rows.js'
import { defineChange } from './define-change.js'

/**
 * `unique` turned on: refused (409 conflict) while records share a value, with how many records and
 * values and the first ids, soft-deleted records included (a unique index covers them: a restore must not
 * collide); else the unique index is made. Turned off: the index is dropped.
 */
export const uniqueChange = defineChange({
  kind: 'unique',
  properties: ['unique'],
  async apply(change, { rows }) {
    if (!change.after.unique) return rows.setUnique(change.after, false)
    await rows.lockWrites()
    const shared = await rows.duplicates(change.after)
    if (shared.records > 0) {
      throw rowsConflict(
        change.field,
        shared.records,
        shared.ids,
        `share ${shared.values === 1 ? 'a value' : `${shared.values} values`} with another record`,
        'make their values distinct (or clear them) first',
        { duplicateValues: shared.values },
      )
    }
    await rows.setUnique(change.after, true)
  },
})
