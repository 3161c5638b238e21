import type { ValidationRules } from '../field-types/index.js'
import { convertRows, rowsConflict } from './convert-rows.js'
import { defineChange } from './define-change.js'

// Whether every value `before` allowed is allowed by `after`: each rule of `after` was there as strict or
// stricter (a pattern only the same one). Then no row needs reading.
function loosened(before: ValidationRules, after: ValidationRules): boolean {
  const at = <K extends keyof ValidationRules>(k: K) => [before[k], after[k]] as const
  const [minLength0, minLength1] = at('minLength')
  const [maxLength0, maxLength1] = at('maxLength')
  const [min0, min1] = at('min')
  const [max0, max1] = at('max')
  return (
    (minLength1 === undefined || (minLength0 !== undefined && minLength1 <= minLength0)) &&
    (maxLength1 === undefined || (maxLength0 !== undefined && maxLength1 >= maxLength0)) &&
    (min1 === undefined || (min0 !== undefined && min1 <= min0)) &&
    (max1 === undefined || (max0 !== undefined && max1 >= max0)) &&
    (after.pattern === undefined || after.pattern === before.pattern)
  )
}

/**
 * `validationRules` (text minLength, maxLength, pattern; number min, max): loosened, metadata only;
 * tightened, every row is checked against the new rules and the change is 409 conflict with the count and
 * first ids of the records they refuse. With a type change in the same PATCH, that change checks the rows
 * against the whole new definition, rules included.
 */
export const validationRulesChange = defineChange({
  kind: 'validationRules',
  properties: ['validationRules'],
  async apply(change, { rows }) {
    if (!change.before || change.before.type !== change.after.type) return
    // Under the name it has now (a rename in the same PATCH has been made in the table already).
    const before = { ...change.before, name: change.field }
    if (loosened(before.validationRules ?? {}, change.after.validationRules ?? {})) return
    await rows.lockWrites()
    const found = await convertRows(rows, before, change.after)
    if (found.refused === 0) return
    throw rowsConflict(
      change.field,
      found.refused,
      found.ids,
      `break the new validationRules${found.reason ? ` (e.g. ${found.reason})` : ''}`,
      'change those values first, or loosen the rules',
    )
  },
})
