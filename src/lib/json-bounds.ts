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
 * The deepest JSON text accepted (containers inside containers). JSON.parse copes with any depth, but
 * JSON.stringify and every recursive walk overflow the stack a few thousand levels down; no real document
 * (a flow with loops inside switches inside loops included) comes near 256.
 */
export const maxJsonNesting = 256

/** Thrown for JSON nested deeper than allowed; a JsonTooLarge, so callers' existing refusals apply. */
export class JsonTooDeep extends JsonTooLarge {
  override name = 'JsonTooDeep'
  constructor(limit: number) {
    super(limit)
    this.message = `The JSON nests deeper than ${limit} levels`
  }
}

/** True when a JSON text nests containers more than `max` deep (outside strings). Linear, no allocation. */
export function jsonTextNestsBeyond(text: string, max = maxJsonNesting): boolean {
  // Each level takes an opening and a closing character: shorter text cannot.
  if (text.length <= 2 * max) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
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
      if (c === 92)
        i++ // a backslash escapes the next character
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

/**
 * JSON.parse, refusing text with more than `limit` values (JsonTooLarge) or nested deeper than
 * maxJsonNesting (JsonTooDeep) before anything is built. Throws SyntaxError as JSON.parse does.
 */
export function parseJsonBounded(text: string, limit = maxJsonValues): unknown {
  assertJsonValues(text, limit)
  if (jsonTextNestsBeyond(text)) throw new JsonTooDeep(maxJsonNesting)
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

/**
 * Where a value nests containers (objects and arrays) more than `max` deep: the path of the first
 * container past the bound (`[0, 'config', 'filter', '_and', 0, …]`, `max + 1` segments), or null when it
 * stays within. Walks with its own stack and stops at the first excess, so 50,000 levels cost as little as
 * `max` and never touch the call stack: run it before anything recursive (a schema, JSON.stringify, a
 * template walk) sees a value a caller sent. Never throws.
 */
export function nestingBeyond(value: unknown, max: number): (string | number)[] | null {
  // Each entry links to its parent, so the path is built only for the answer, not for every value.
  interface Entry {
    readonly value: unknown
    readonly key: string | number | null
    readonly parent: Entry | null
    readonly depth: number
  }
  const stack: Entry[] = [{ value, key: null, parent: null, depth: 0 }]
  while (stack.length > 0) {
    const entry = stack.pop()!
    const item = entry.value
    if (typeof item !== 'object' || item === null) continue
    if (entry.depth > max) {
      const path: (string | number)[] = []
      for (let at: Entry | null = entry; at !== null && at.key !== null; at = at.parent) path.unshift(at.key)
      return path
    }
    const depth = entry.depth + 1
    if (Array.isArray(item))
      for (let i = item.length - 1; i >= 0; i -= 1) stack.push({ value: item[i], key: i, parent: entry, depth })
    else
      for (const key of Object.keys(item).reverse())
        stack.push({ value: (item as Record<string, unknown>)[key], key, parent: entry, depth })
  }
  return null
}
