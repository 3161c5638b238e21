import markdownIt, { type MarkdownIt } from 'markdown-it'
import { brickPrefix } from './info-string.js'

/** A fence whose info string starts with `service:`, as the Markdown gives it. */
export interface BrickFence {
  /** The info string as written (trimmed): read from the source line, so escapes are the author's. */
  readonly info: string
  /** The 1-based document line of the opening fence. */
  readonly line: number
  /** The 1-based document line of the first line of the body. */
  readonly bodyLine: number
  readonly body: string
  /** False when the fence never closes (the Markdown then runs it to the end of its container). */
  readonly terminated: boolean
}

// Block structure only: fences, and what hides one (indented code, HTML blocks, lists, quotes). Inline
// parsing is not needed and is skipped.
let parser: MarkdownIt | undefined
function markdown(): MarkdownIt {
  if (!parser) {
    parser = markdownIt('commonmark', { html: true })
    parser.core.ruler.disable(['inline', 'text_join'])
  }
  return parser
}

/**
 * The `service:` fences of the Markdown body: `lines` is the whole document, the body starts at index
 * `from`. A fence with another prefix (or none) is prose and installs nothing.
 */
export function readFences(lines: readonly string[], from: number): BrickFence[] {
  const body = lines.slice(from).join('\n')
  const out: BrickFence[] = []
  for (const token of markdown().parse(body, {})) {
    if (token.type !== 'fence' || !token.map || !token.info.trim().startsWith(brickPrefix)) continue
    const [start, end] = token.map
    const opener = lines[from + start] ?? ''
    const at = opener.indexOf(token.markup)
    const info = (at >= 0 ? opener.slice(at + token.markup.length) : token.info).trim()
    const last = end - 1 > start ? (lines[from + end - 1] ?? '') : null
    out.push({
      info,
      line: from + start + 1,
      bodyLine: from + start + 2,
      body: token.content,
      terminated: last !== null && closes(last, token.markup),
    })
  }
  return out
}

/** Whether a line (inside quotes or list items, so after `>` and spaces) closes a fence opened with `markup`. */
function closes(line: string, markup: string): boolean {
  const rest = line.replace(/^[\s>]*/, '').trimEnd()
  return rest.length >= markup.length && [...rest].every((c) => c === markup[0])
}
