import { AppError } from '../../../lib/errors.js'
import { defineChange } from './define-change.js'

/**
 * A relation's `displayField` (which field of the target names a record; checked against the target's
 * fields when the definition is read) and `onDelete` (what deleting a target record does, applied by the
 * records layer at that time): metadata only. Its `targetCollection` or `relationType` is what the stored
 * ids mean and how they are stored: 400 invalid_field.
 */
export const relationConfigChange = defineChange({
  kind: 'relationConfig',
  properties: ['relationConfig'],
  validate(change) {
    const before = change.before?.relationConfig
    const after = change.after.relationConfig
    if (!before || !after) return
    for (const key of ['targetCollection', 'relationType'] as const) {
      if (before[key] === after[key]) continue
      throw new AppError(
        'invalid_field',
        `Field "${change.field}": changing relationConfig.${key} (${before[key]} → ${after[key]}) is not supported: the ids the records hold would mean other records; add a new relation field instead`,
        { field: change.field, property: `relationConfig.${key}` },
      )
    }
  },
})
