/**
 * About how many characters `JSON.stringify(value)` would write (strings without their escapes), counted
 * without writing it and given up as soon as the count passes `limit` (it then answers a number above
 * `limit`). A value held in several places counts in each, as JSON writes it. With `indent`, the newlines
 * and two spaces per level that a pretty-printed form adds are counted too. Walks with its own stack, so a
 * deeply nested value never overflows the call stack. Never throws.
 */
export function jsonSize(value: unknown, limit: number, options: { indent?: boolean } = {}): number {
  let size = 0
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const { value: item, depth } = stack.pop()!
    if (options.indent && depth > 0) size += 1 + 2 * depth
    size += scalarSize(item)
    if (typeof item === 'object' && item !== null) {
      const children: [string | null, unknown][] = Array.isArray(item)
        ? item.map((child): [null, unknown] => [null, child])
        : Object.entries(item).filter(([, child]) => child !== undefined && typeof child !== 'function')
      // Brackets and commas; a key is quoted and followed by a colon (and a space when indented).
      size += 2 + Math.max(0, children.length - 1)
      if (options.indent && children.length > 0) size += 1 + 2 * depth
      for (let i = children.length - 1; i >= 0; i--) {
        const [key, child] = children[i]!
        if (key !== null) size += key.length + 3 + (options.indent ? 1 : 0)
        stack.push({ value: child, depth: depth + 1 })
      }
    }
    if (size > limit) return size
  }
  return size
}

function scalarSize(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2
    case 'number':
    case 'bigint':
      return String(value).length
    case 'boolean':
      return value ? 4 : 5
    case 'object':
      return value === null ? 4 : 0
    default:
      return 4 // undefined or a function in an array is written as null
  }
}
