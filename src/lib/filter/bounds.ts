import { childPath, filterError } from './filter-error.js'
import { filterLimits } from './limits.js'

/**
 * Containers a filter within the limits can nest: each `_and`/`_or` level is an object and an array, and
 * under the deepest one come a condition object, an operator object and an `_in` list.
 */
const maxContainerNesting = 2 * filterLimits.maxDepth + 4
/** No array of a filter holds more: an `_in` list (500 values) is the longest, conditions (100) come next. */
const maxArrayLength = Math.max(filterLimits.maxListValues, filterLimits.maxConditions)

interface Pending {
  readonly value: unknown
  readonly at: string
  /** Containers around this value. */
  readonly nesting: number
  /** `_and`/`_or` levels around this value. */
  readonly levels: number
}

/**
 * The bounds every filter is held to before anything else reads it, whatever it came through (a query
 * parameter, a grant, a lens, a tool call, a flow step): at most 8 `_and`/`_or` levels (and containers
 * nested no deeper than such a filter needs), about 16 KiB as JSON, strings (keys too) of 4,096
 * characters, arrays of 500 items. Walks with its own stack and stops at the first excess, so 50,000
 * nested levels cost as little as nine and never touch the call stack. Shape and operators are the
 * parser's business. Throws invalid_request naming where (`filter._and[0]._or[0]…`).
 */
export function checkFilterBounds(value: unknown, at = 'filter'): void {
  let size = 0
  const stack: Pending[] = [{ value, at, nesting: 0, levels: 0 }]
  while (stack.length > 0) {
    const item = stack.pop()!
    size += sizeOf(item)
    if (size > filterLimits.maxJsonBytes)
      throw filterError(item.at, `filter is larger than ${filterLimits.maxJsonBytes} bytes as JSON`)
    const { value: raw } = item
    if (typeof raw !== 'object' || raw === null) continue
    if (item.nesting >= maxContainerNesting)
      throw filterError(item.at, `filter nests deeper than ${filterLimits.maxDepth} levels`)
    if (Array.isArray(raw)) {
      if (raw.length > maxArrayLength) throw filterError(item.at, `array holds more than ${maxArrayLength} items`)
      for (let i = raw.length - 1; i >= 0; i -= 1)
        stack.push({ value: raw[i], at: childPath(item.at, i), nesting: item.nesting + 1, levels: item.levels })
      continue
    }
    // Own enumerable string keys, as JSON.stringify and the parser see them (a Map or a class instance is the parser's to refuse).
    const keys = Object.keys(raw)
    for (let i = keys.length - 1; i >= 0; i -= 1) {
      const key = keys[i]!
      if (key.length > filterLimits.maxStringLength)
        throw filterError(item.at, `key longer than ${filterLimits.maxStringLength} characters`)
      const here = childPath(item.at, key)
      const levels = key === '_and' || key === '_or' ? item.levels + 1 : item.levels
      if (levels > filterLimits.maxDepth)
        throw filterError(here, `filter nests deeper than ${filterLimits.maxDepth} levels`)
      size += key.length + 3
      stack.push({ value: (raw as Record<string, unknown>)[key], at: here, nesting: item.nesting + 1, levels })
    }
  }
}

/** What one value adds to the JSON text (its own characters, not its children's); refuses a long string. */
function sizeOf({ value, at }: Pending): number {
  switch (typeof value) {
    case 'string':
      if (value.length > filterLimits.maxStringLength)
        throw filterError(at, `string value longer than ${filterLimits.maxStringLength} characters`)
      return value.length + 2
    case 'number':
    case 'bigint':
      return String(value).length
    case 'boolean':
      return 5
    case 'object':
      // Brackets and the commas between children (JSON.stringify's own count: a filter exactly at the limit passes).
      return value === null ? 4 : 2 + Math.max(0, (Array.isArray(value) ? value.length : Object.keys(value).length) - 1)
    default:
      return 4
  }
}
