/**
 * Bounds on JSON a caller can make the server hold. Parsed JSON costs far more memory than its text: 10 MB of
 * `[[],[],…]` (3.3 million empty arrays) grows the heap by about 440 MB, so a size limit on the text alone
 * does not bound memory; a limit on the number of values does (about 140 bytes each at worst).
 */

/** The most values (containers, elements, members) one JSON text may hold: about 140 MB of heap at worst. */
export const maxJsonValues = 1_000_000

/** Thrown for JSON with more values than allowed; callers turn it into their own 4xx. */
export class JsonTooLarge extends Error {
  override name = 'JsonTooLarge'
  constructor(readonly limit: number) {
    super(`The JSON holds more than ${limit.toLocaleString('en')} values`)
  }
}

/**
 * Roughly how many values a JSON text holds: the containers and separators outside strings (`[`, `{`, `,`,
 * `:`), counted until `limit` is passed. Linear, no allocation.
 */
export function jsonValueCount(text: string, limit = maxJsonValues): number {
  let count = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // a backslash escapes the next character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123 || c === 44 || c === 58) {
      if (++count > limit) return count
    }
  }
  return count
}

/**
 * Throws JsonTooLarge when the text holds more than `limit` values. Text shorter than twice the limit
 * cannot (every value but the first takes a separator and a character), so it is not scanned.
 */
export function assertJsonValues(text: string, limit = maxJsonValues): void {
  if (text.length >= 2 * limit && jsonValueCount(text, limit) > limit) throw new JsonTooLarge(limit)
}

/** JSON.parse, refusing text with more than `limit` values (JsonTooLarge) before anything is built. Throws SyntaxError as JSON.parse does. */
export function parseJsonBounded(text: string, limit = maxJsonValues): unknown {
  assertJsonValues(text, limit)
  return JSON.parse(text) as unknown
}

/**
 * An estimate of the heap a plain value holds (objects and arrays with their slots, strings as UTF-16),
 * walked until it passes `limit` (then the walk stops and a number over it is answered). Shared objects
 * count each time they are reached: an upper bound.
 */
export function valueWeight(value: unknown, limit = Number.MAX_SAFE_INTEGER): number {
  let total = 0
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item === 'string') total += 16 + 2 * item.length
    else if (item === null || typeof item !== 'object') total += 16
    else if (Array.isArray(item)) {
      total += 32 + 8 * item.length
      for (const element of item) stack.push(element)
    } else {
      const keys = Object.keys(item)
      total += 56 + 24 * keys.length
      for (const key of keys) stack.push((item as Record<string, unknown>)[key])
    }
    if (total > limit) return total
  }
  return total
}
