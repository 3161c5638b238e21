import { AppError } from '../../../lib/errors.js'
import { defineChange, type FieldChange } from './define-change.js'

const multi = (change: FieldChange) => change.after.type === 'multi_enum'

/** The values the change takes away, and where `enumChanges` sends each (a removed value may be unmapped). */
function removedValues(change: FieldChange): string[] {
  const kept = new Set(change.after.enumValues ?? [])
  return (change.before?.enumValues ?? []).filter((v) => !kept.has(v))
}

/**
 * Values of an enum or multi_enum field: adding one is metadata only; removing or renaming one rewrites
 * the rows that hold it to the value `enumChanges` maps it to (multi_enum: each element, repeats merged),
 * and is refused (409 conflict, with the count per value) while rows hold an unmapped removed value.
 */
export const enumValuesChange = defineChange({
  kind: 'enumValues',
  properties: ['enumValues'],
  validate(change, request) {
    const mapping = request.enumChanges[change.field] ?? {}
    const before = new Set(change.before?.enumValues ?? [])
    const after = new Set(change.after.enumValues ?? [])
    for (const [from, to] of Object.entries(mapping)) {
      const problem = !before.has(from)
        ? `"${from.slice(0, 40)}" is not a value of the field`
        : after.has(from)
          ? `"${from.slice(0, 40)}" stays a value of the field; only removed values are mapped`
          : !after.has(to)
            ? `"${to.slice(0, 40)}" is not one of its new enumValues`
            : null
      if (problem)
        throw new AppError('invalid_request', `enumChanges.${change.field}: ${problem}`, {
          field: change.field,
          value: from.slice(0, 200),
        })
    }
  },
  async apply(change, { rows, request }) {
    // To or from another type (text → enum): the type change checks every value against the new list.
    if (change.before?.type !== change.after.type) return
    const removed = removedValues(change)
    if (removed.length === 0) return
    const mapping = request.enumChanges[change.field] ?? {}
    const counts = new Map<string, number>()
    const updates: [string, unknown][] = []
    const many = multi(change)
    await rows.scan(change.after, many ? null : removed, (id, value) => {
      const items = many ? (Array.isArray(value) ? (value as unknown[]) : []) : [value]
      let touched = false
      const next = items.map((item) => {
        if (typeof item !== 'string' || !removed.includes(item)) return item
        touched = true
        counts.set(item, (counts.get(item) ?? 0) + 1)
        return mapping[item]
      })
      if (touched) updates.push([id, many ? [...new Set(next)] : next[0]])
    })
    const unmapped = [...counts].filter(([value]) => mapping[value] === undefined)
    if (unmapped.length > 0) {
      const held = unmapped.map(([value, n]) => `${n} record${n === 1 ? '' : 's'} hold "${value.slice(0, 40)}"`)
      throw new AppError(
        'conflict',
        `Field "${change.field}": ${held.join(', ')}; map each removed value to a kept one with enumChanges, e.g. { "${change.field}": { "${unmapped[0]?.[0].slice(0, 40)}": "${change.after.enumValues?.[0]?.slice(0, 40)}" } }; nothing was changed`,
        { field: change.field, values: Object.fromEntries(unmapped) },
      )
    }
    await rows.write(change.after, updates)
  },
})
