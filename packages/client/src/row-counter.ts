// Counts the records of an export as its bytes stream past, without holding the file.

export interface RowCounter {
  /** Takes the next bytes; answers the records complete so far. */
  push(chunk: Uint8Array): number
}

/**
 * CSV: line ends outside quotes, less the header (RFC 4180: a quoted cell may hold line breaks). JSON: objects
 * opened directly inside the top-level array, outside strings.
 */
export function createRowCounter(format: 'csv' | 'json'): RowCounter {
  const decoder = new TextDecoder()
  let quoted = false
  let escaped = false
  let depth = 0
  let count = 0
  const csv = (text: string) => {
    for (const ch of text) {
      if (ch === '"') quoted = !quoted
      else if (ch === '\n' && !quoted) count++
    }
    return Math.max(0, count - 1)
  }
  const json = (text: string) => {
    for (const ch of text) {
      if (quoted) {
        if (escaped) escaped = false
        else if (ch === '\\') escaped = true
        else if (ch === '"') quoted = false
      } else if (ch === '"') quoted = true
      else if (ch === '[' || ch === '{') {
        if (ch === '{' && depth === 1) count++
        depth++
      } else if (ch === ']' || ch === '}') depth--
    }
    return count
  }
  return { push: (chunk) => (format === 'csv' ? csv : json)(decoder.decode(chunk, { stream: true })) }
}
