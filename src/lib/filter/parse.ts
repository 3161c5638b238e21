import { matchAll, type FilterNode } from './ast.js'
import { checkFilterBounds } from './bounds.js'
import { filterError } from './filter-error.js'
import { filterLimits } from './limits.js'
import { parseArrayFilter } from './parse-array.js'
import { parseObjectFilter } from './parse-object.js'
import { isPlainObject } from './plain-object.js'

const root = 'filter'

/**
 * Parses a filter, given as a JSON string (the list query parameter) or as a value (a grant's item_filter),
 * in the object or the array format, into a frozen AST; `{}` and `[]` give an empty AND (match all).
 * The bounds (bounds.ts) are checked first. Throws invalid_request naming where the filter is wrong.
 */
export function parseFilter(input: unknown): FilterNode {
  const value = typeof input === 'string' ? decodeJson(input) : input
  // First, before anything walks it recursively: one set of bounds for every way a filter arrives.
  checkFilterBounds(value, root)
  const state = { conditions: 0 }
  if (Array.isArray(value)) return value.length === 0 ? matchAll() : parseArrayFilter(value, root, state)
  if (isPlainObject(value)) {
    return Object.keys(value).length === 0 && Object.getOwnPropertySymbols(value).length === 0
      ? matchAll()
      : parseObjectFilter(value, root, 0, state)
  }
  throw filterError(root, 'expected a filter object or an array of conditions')
}

function decodeJson(text: string): unknown {
  // Characters never outnumber UTF-8 bytes, so the cheap test first.
  if (text.length > filterLimits.maxJsonBytes || Buffer.byteLength(text, 'utf8') > filterLimits.maxJsonBytes) {
    throw filterError(root, `longer than ${filterLimits.maxJsonBytes} bytes`)
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    // The parser's own message would echo the input; the position adds little for a 16 KiB document.
    throw filterError(root, 'not valid JSON')
  }
}
