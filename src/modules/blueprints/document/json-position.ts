/**
 * Where a JSON text first goes wrong, for a diagnostic's line: JSON.parse's messages name a position on
 * some Node versions and not on others, so the text is scanned here (only once JSON.parse has refused it).
 * Iterative, linear. Returns -1 when the text is valid JSON.
 */
export function jsonErrorOffset(text: string): number {
  const open: number[] = []
  let state: 'value' | 'firstValue' | 'key' | 'firstKey' | 'after' = 'value'
  let i = 0
  const n = text.length
  for (;;) {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++
    if (i >= n) return state === 'after' && open.length === 0 ? -1 : n
    const c = text[i]!
    if (state === 'after') {
      const top = open[open.length - 1]
      if (top === undefined) return i
      if (c === ',') {
        i++
        state = top === 123 ? 'key' : 'value'
      } else if (c.charCodeAt(0) === top + 2) {
        // `{` 123 closes with `}` 125, `[` 91 with `]` 93.
        open.pop()
        i++
      } else return i
      continue
    }
    if (state === 'key' || state === 'firstKey') {
      if (state === 'firstKey' && c === '}') {
        open.pop()
        i++
        state = 'after'
        continue
      }
      if (c !== '"') return i
      i = stringEnd(text, i)
      if (i < 0) return -i - 1
      while (i < n && /\s/.test(text[i]!)) i++
      if (text[i] !== ':') return i
      i++
      state = 'value'
      continue
    }
    if (state === 'firstValue' && c === ']') {
      open.pop()
      i++
      state = 'after'
      continue
    }
    if (c === '{' || c === '[') {
      open.push(c.charCodeAt(0))
      i++
      state = c === '{' ? 'firstKey' : 'firstValue'
      continue
    }
    if (c === '"') {
      i = stringEnd(text, i)
      if (i < 0) return -i - 1
    } else {
      const end = scalarEnd(text, i)
      if (end < 0) return i
      i = end
    }
    state = 'after'
  }
}

const escapes = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'])

/** The offset after a string starting at `at`, or -(offset of the fault) - 1. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') return i + 1
    if (c.charCodeAt(0) < 0x20) return -i - 1
    if (c !== '\\') continue
    const next = text[i + 1]
    if (next === 'u') {
      if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return -i - 1
      i += 5
    } else if (next !== undefined && escapes.has(next)) i++
    else return -i - 1
  }
  return -text.length - 1
}

const scalar = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y

/** The offset after a number or literal at `at`, or -1. */
function scalarEnd(text: string, at: number): number {
  scalar.lastIndex = at
  return scalar.test(text) ? scalar.lastIndex : -1
}
