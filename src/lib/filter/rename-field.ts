/**
 * Stored filters (grants' item_filter, in either format) as data: which fields they name and the same
 * filter with one field renamed. A field is named by an object-format key (`title`, or a path from it,
 * `title.sub`, `assignee.name`) or an array-format condition's `field`; operator values are literals and
 * are never read as names. Only `_and`, `_or` and `_not` lead to nested filters.
 */

const logical = new Set(['_and', '_or', '_not'])

const names = (path: unknown, field: string): boolean =>
  typeof path === 'string' && (path === field || path.startsWith(`${field}.`))

const renamed = (path: string, from: string, to: string): string => (path === from ? to : to + path.slice(from.length))

/** Whether the filter names `field` (or a path through it). */
export function filterNamesField(filter: unknown, field: string): boolean {
  let found = false
  walk(filter, field, field, () => {
    found = true
  })
  return found
}

/** The filter with `from` (and paths through it) renamed to `to`; the input is left as it is. */
export function renameFilterField(filter: unknown, from: string, to: string): unknown {
  return walk(filter, from, to, () => {})
}

function walk(value: unknown, from: string, to: string, hit: () => void): unknown {
  if (Array.isArray(value)) return value.map((item) => walk(item, from, to, hit))
  if (value === null || typeof value !== 'object') return value
  const object = value as Record<string, unknown>
  // An array-format condition: { field, op, value, valueTo }.
  if (typeof object.field === 'string' && typeof object.op === 'string') {
    if (!names(object.field, from)) return object
    hit()
    return { ...object, field: renamed(object.field, from, to) }
  }
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(object)) {
    if (logical.has(key)) out[key] = walk(inner, from, to, hit)
    else if (names(key, from)) {
      hit()
      out[renamed(key, from, to)] = inner
    } else out[key] = inner
  }
  return out
}
