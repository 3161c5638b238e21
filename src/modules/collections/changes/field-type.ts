import { AppError } from '../../../lib/errors.js'
import type { FieldTypeName } from '../field-types/index.js'
import { convertRows, rowsConflict } from './convert-rows.js'
import { defineChange } from './define-change.js'

/**
 * Types whose values convert into each other: a value of one is a value of another once the new type's
 * check accepts it (decision 060). Strings: the text-like types, uuid and enum, one text column in both
 * dialects. Numbers: integer, number and decimal, JSON numbers in every storage.
 */
export const convertibleTypes: readonly (readonly FieldTypeName[])[] = [
  ['text', 'richtext', 'email', 'url', 'phone', 'slug', 'uuid', 'enum'],
  ['integer', 'number', 'decimal'],
]

const groupOf = (type: FieldTypeName) => convertibleTypes.find((group) => group.includes(type))

/**
 * `type` of an existing field, within a group of convertible types: every row's value is checked as a
 * write of the new type would check it (its format, enumValues, a whole number, its validationRules); a
 * row it refuses makes the change 409 conflict with their count and first ids. Then the column takes the
 * new type (PostgreSQL ALTER … USING, SQLite a rebuild) and values whose stored form changes are
 * rewritten. Another pair of types is 400 invalid_field.
 */
export const fieldTypeChange = defineChange({
  kind: 'type',
  properties: ['type'],
  validate(change) {
    const from = change.before?.type
    const to = change.after.type
    if (from === undefined) return
    if (groupOf(from)?.includes(to)) {
      // A kv table on PostgreSQL indexes a cast to the new type, made before the rows are checked: a
      // fraction would fail the index as a database error rather than the change as a 409 with ids.
      if (!change.before?.indexed && change.after.indexed && from !== to && groupOf(to) === convertibleTypes[1])
        throw new AppError(
          'invalid_field',
          `Field "${change.field}": change its type and turn indexed on in two PATCHes (the type first)`,
          { field: change.field, changed: ['type', 'indexed'] },
        )
      return
    }
    throw new AppError(
      'invalid_field',
      `Field "${change.field}": changing type from ${from} to ${to} is not supported; values convert only among ${convertibleTypes.map((g) => g.join(', ')).join(' and among ')} (see "Changing a collection" in the docs)`,
      { field: change.field, from, to },
    )
  },
  async apply(change, { rows }) {
    if (!change.before) return
    // Under the name it has now: a field renamed in the same PATCH has been renamed in the table already.
    const before = { ...change.before, name: change.field }
    await rows.lockWrites()
    const found = await convertRows(rows, before, change.after)
    if (found.refused > 0) {
      throw rowsConflict(
        change.field,
        found.refused,
        found.ids,
        `hold a value that is not a valid ${change.after.type}${found.reason ? ` (e.g. ${found.reason})` : ''}`,
        'change or clear those values first, or widen the new definition',
        { from: before.type, to: change.after.type },
      )
    }
    await rows.changeType(before, change.after)
    await rows.write(change.after, found.updates)
  },
})
