import { AppError } from '../../../lib/errors.js'
import { defineChange } from './define-change.js'

/**
 * `required` turned on: the rows with no value get the field's `defaultValue` (sent in the same PATCH or
 * already there), and without one the change is refused (409 conflict, with their count). Turned off:
 * always allowed; a column made NOT NULL with its table is let go of the constraint.
 */
export const requiredChange = defineChange({
  kind: 'required',
  properties: ['required'],
  async apply(change, { rows }) {
    if (!change.after.required) {
      await rows.makeNullable(change.after)
      return
    }
    const missing = await rows.countNull(change.after)
    if (missing === 0) return
    if (change.after.defaultValue === undefined) {
      throw new AppError(
        'conflict',
        `Field "${change.field}": ${missing} record${missing === 1 ? ' has' : 's have'} no value; give the field a defaultValue to fill them with, or fill them first; nothing was changed`,
        { field: change.field, nullRecords: missing },
      )
    }
    await rows.fillNull(change.after, change.after.defaultValue)
  },
})

/** A field's `defaultValue`: what a new record without the field gets (checked against the type when defined). */
export const defaultValueChange = defineChange({ kind: 'defaultValue', properties: ['defaultValue'] })
