import { isAlias, isMap, isScalar, isSeq, Lexer, parseDocument, type Node } from 'yaml'

/**
 * The front matter as YAML nodes, read without ever expanding an alias: anchors, aliases and merge keys
 * are found in the node tree and refused (the document is never turned into plain values while one is
 * there), so a billion-laughs envelope costs what its text costs. The yaml library composes nodes
 * recursively and slows down sharply with nesting, so the text is first lexed (linear) and refused when it
 * nests deeper than `maxYamlNesting`.
 */

/** The deepest the front matter may nest (block levels, `- ` items on one line and flow brackets together). */
export const maxYamlNesting = 16

/** A problem found while reading the YAML, at an offset into the front-matter text. */
export interface YamlProblem {
  readonly kind: 'syntax' | 'unsupported'
  readonly message: string
  readonly offset: number
}

export type YamlRead = { ok: true; root: Node | null } | { ok: false; problems: YamlProblem[] }

/** Parses front-matter text into nodes; refuses deep nesting, bad YAML, duplicate or complex keys, anchors, aliases and merge keys. */
export function readYaml(text: string): YamlRead {
  const deep = nestingBeyond(text, maxYamlNesting)
  if (deep !== null) {
    return {
      ok: false,
      problems: [
        { kind: 'syntax', message: `the front matter nests deeper than ${maxYamlNesting} levels`, offset: deep },
      ],
    }
  }
  // uniqueKeys is checked below in linear time (the library's own check compares every pair of keys).
  const doc = parseDocument(text, { merge: false, uniqueKeys: false, prettyErrors: false, strict: true })
  const first = doc.errors[0]
  if (first) return { ok: false, problems: [{ kind: 'syntax', message: first.message, offset: first.pos[0] }] }
  const problems = structuralProblems(text, doc.contents as Node | null)
  return problems.length > 0 ? { ok: false, problems } : { ok: true, root: (doc.contents as Node | null) ?? null }
}

/** Anchors, aliases, merge keys, complex and duplicate keys: walked with a stack of its own. */
function structuralProblems(text: string, root: Node | null): YamlProblem[] {
  const problems: YamlProblem[] = []
  const stack: unknown[] = root ? [root] : []
  while (stack.length > 0) {
    const node = stack.pop()
    if (isAlias(node)) {
      problems.push({ kind: 'unsupported', message: `alias *${node.source.slice(0, 80)}`, offset: offsetOf(node) })
      continue
    }
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) continue
    if (node.anchor)
      problems.push({
        kind: 'unsupported',
        message: `anchor &${node.anchor.slice(0, 80)}`,
        offset: anchorAt(text, node),
      })
    if (isSeq(node)) for (const item of node.items) stack.push(item)
    if (!isMap(node)) continue
    const seen = new Set<string>()
    for (const pair of node.items) {
      const key = pair.key
      if (!isScalar(key)) {
        if (isAlias(key)) stack.push(key)
        else problems.push({ kind: 'syntax', message: 'keys must be plain scalars', offset: offsetOf(key) })
        continue
      }
      if (key.anchor)
        problems.push({
          kind: 'unsupported',
          message: `anchor &${key.anchor.slice(0, 80)}`,
          offset: anchorAt(text, key),
        })
      const name = String(key.value)
      if (name === '<<' && key.type === 'PLAIN') {
        problems.push({ kind: 'unsupported', message: 'merge key <<', offset: offsetOf(key) })
      } else if (seen.has(name)) {
        problems.push({
          kind: 'syntax',
          message: `the key ${name.slice(0, 80)} appears twice in one mapping`,
          offset: offsetOf(key),
        })
      }
      seen.add(name)
      stack.push(pair.value)
    }
  }
  return problems.sort((a, b) => a.offset - b.offset)
}

/** Where a node's anchor is written: before the node's own range, which starts at its content. */
function anchorAt(text: string, node: Node & { anchor?: string }): number {
  const start = offsetOf(node)
  const at = text.lastIndexOf(`&${node.anchor}`, start)
  return at >= 0 ? at : start
}

/** Where a node starts in the text (0 when the library kept no range). */
export function offsetOf(node: unknown): number {
  const range = (node as { range?: readonly number[] | null } | null)?.range
  return range?.[0] ?? 0
}

/**
 * The offset where the text first nests deeper than `max`, or null. An over-estimate (every new
 * indentation level, every `-` or `?` on a line and every open flow bracket counts), read from the
 * library's lexer, which runs in linear time and knows quoted scalars and comments.
 */
export function nestingBeyond(text: string, max: number): number | null {
  const indents: number[] = []
  let flow = 0
  let onLine = 0
  let lineStart = true
  let indent = 0
  let offset = 0
  for (const token of new Lexer().lex(text)) {
    const at = offset
    // Control tokens (document and scalar markers) are not part of the text.
    if (token.length > 0 && token.charCodeAt(0) >= 0x20) offset += token.length
    if (token === '\n' || token === '\r\n') {
      lineStart = true
      indent = 0
      onLine = 0
      continue
    }
    if (lineStart && /^[ \t]+$/.test(token)) {
      indent = token.length
      continue
    }
    if (lineStart && token.length > 0 && token.charCodeAt(0) >= 0x20 && !token.startsWith('#')) {
      lineStart = false
      while (indents.length > 0 && indents[indents.length - 1]! > indent) indents.pop()
      if (indents.length === 0 || indents[indents.length - 1]! < indent) indents.push(indent)
    }
    if (token === '-' || token === '?') onLine += 1
    else if (token === '[' || token === '{') flow += 1
    else if (token === ']' || token === '}') flow = Math.max(0, flow - 1)
    if (indents.length + onLine + flow > max) return at
  }
  return null
}
