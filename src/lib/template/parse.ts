import type { ParsedTemplate, PathSegment, TagPart, TemplatePart, TemplateSyntaxError } from './ast.js'

/** Keys that would reach an object's prototype; refused in every path, quoted or not. */
const forbiddenKeys: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])
/** A bare name: letters and digits of any script, `_`, `$` and `-` (`$trigger`, `first-name`, `0`). */
const nameChar = /[\p{L}\p{N}_$-]/u
const space = /\s/
const canonicalIndex = /^(0|[1-9][0-9]*)$/

/** What parsing a template answers: its frozen parts, or the first syntax error. */
export type Parsed = { ok: true; template: ParsedTemplate } | { ok: false; error: TemplateSyntaxError }

class SyntaxFailure {
  constructor(readonly error: TemplateSyntaxError) {}
}

function fail(code: TemplateSyntaxError['code'], message: string, position: number): never {
  throw new SyntaxFailure({ code, message: `${message} (at offset ${position})`, position })
}

/**
 * Parses a template string into frozen parts. Never throws: a malformed template answers the first
 * error with its offset (unclosed_tag, empty_tag, empty_expression, invalid_path, forbidden_key).
 */
export function parseTemplate(text: string): Parsed {
  try {
    return { ok: true, template: parseOrThrow(text) }
  } catch (err) {
    if (err instanceof SyntaxFailure) return { ok: false, error: err.error }
    throw err
  }
}

function parseOrThrow(text: string): ParsedTemplate {
  const parts: TemplatePart[] = []
  let literal = ''
  let at = 0
  for (;;) {
    const open = text.indexOf('{{', at)
    if (open === -1) break
    // `\{{` is a literal `{{`; any other backslash is itself.
    if (open > 0 && text[open - 1] === '\\') {
      literal += `${text.slice(at, open - 1)}{{`
      at = open + 2
      continue
    }
    literal += text.slice(at, open)
    if (literal !== '') parts.push(Object.freeze({ kind: 'text', text: literal }))
    literal = ''
    const { tag, end } = parseTag(text, open)
    parts.push(tag)
    at = end
  }
  literal += text.slice(at)
  if (literal !== '') parts.push(Object.freeze({ kind: 'text', text: literal }))
  const only = parts.length === 1 ? parts[0]! : null
  return Object.freeze({ parts: Object.freeze(parts), whole: only && only.kind !== 'text' ? only : null })
}

/** The tag opening at `open` (its `{{`) and the offset just past its `}}`. */
function parseTag(text: string, open: number): { tag: TagPart; end: number } {
  let at = skipSpace(text, open + 2)
  if (text.startsWith('}}', at)) fail('empty_tag', 'Empty {{ }}', open)
  if (text[at] === '=') {
    const close = expressionEnd(text, at + 1, open)
    const code = text.slice(at + 1, close).trim()
    if (code === '') fail('empty_expression', 'Empty expression in {{= }}', open)
    const source = text.slice(open, close + 2)
    return { tag: Object.freeze({ kind: 'expression', source, position: open, code }), end: close + 2 }
  }
  if (text.indexOf('}}', at) === -1) fail('unclosed_tag', '{{ is never closed with }}', open)
  const path = parsePath(text, at)
  at = skipSpace(text, path.end)
  if (!text.startsWith('}}', at)) {
    if (at >= text.length) fail('unclosed_tag', '{{ is never closed with }}', open)
    fail('invalid_path', `Unexpected ${quoteChar(text, at)} in a template path`, at)
  }
  const source = text.slice(open, at + 2)
  return {
    tag: Object.freeze({ kind: 'path', source, position: open, root: path.root, segments: path.segments }),
    end: at + 2,
  }
}

/** `root`, then `.name`, `[0]` or `["name"]` any number of times. */
function parsePath(text: string, start: number): { root: string; segments: readonly PathSegment[]; end: number } {
  let at = start
  const root = readName(text, at)
  if (root === '') fail('invalid_path', `A template path starts with a name, not ${quoteChar(text, at)}`, at)
  checkKey(root, at)
  at += root.length
  const segments: PathSegment[] = []
  for (;;) {
    const c = text[at]
    if (c === '.') {
      const name = readName(text, at + 1)
      if (name === '')
        fail('invalid_path', `A name must follow "." in a template path, not ${quoteChar(text, at + 1)}`, at + 1)
      checkKey(name, at + 1)
      segments.push(Object.freeze({ kind: 'key', key: name }))
      at += 1 + name.length
    } else if (c === '[') {
      const { segment, end } = parseBracket(text, at)
      segments.push(segment)
      at = end
    } else {
      return { root, segments: Object.freeze(segments), end: at }
    }
  }
}

/** `[0]` (a canonical non-negative integer) or `["key"]` / `['key']` (no escapes; any character but the quote). */
function parseBracket(text: string, open: number): { segment: PathSegment; end: number } {
  const quote = text[open + 1]
  if (quote === '"' || quote === "'") {
    const close = text.indexOf(quote, open + 2)
    if (close === -1 || text[close + 1] !== ']')
      fail('invalid_path', `Unterminated [${quote}…${quote}] in a template path`, open)
    const key = text.slice(open + 2, close)
    checkKey(key, open + 2)
    return { segment: Object.freeze({ kind: 'key', key }), end: close + 2 }
  }
  const close = text.indexOf(']', open + 1)
  const digits = close === -1 ? '' : text.slice(open + 1, close)
  if (!canonicalIndex.test(digits) || !Number.isSafeInteger(Number(digits))) {
    fail('invalid_path', 'An index in [ ] is a whole number without leading zeros, or a quoted key', open + 1)
  }
  return { segment: Object.freeze({ kind: 'index', index: Number(digits) }), end: close + 1 }
}

/**
 * Where the expression's closing `}}` is: the first one outside string literals (`"…"`, `'…'`, `` `…` ``,
 * backslash escapes honoured) and outside braces the expression opened, so `{{= {"a": {"b": 1}} }}` works.
 */
function expressionEnd(text: string, start: number, open: number): number {
  let depth = 0
  for (let at = start; at < text.length; at++) {
    const c = text[at]
    if (c === '"' || c === "'" || c === '`') {
      at = stringEnd(text, at, open)
    } else if (c === '{') {
      depth++
    } else if (c === '}') {
      if (depth === 0 && text[at + 1] === '}') return at
      if (depth > 0) depth--
    }
  }
  return fail('unclosed_tag', '{{= is never closed with }}', open)
}

function stringEnd(text: string, start: number, open: number): number {
  const quote = text[start]
  for (let at = start + 1; at < text.length; at++) {
    if (text[at] === '\\') at++
    else if (text[at] === quote) return at
  }
  return fail('unclosed_tag', '{{= has a string that never ends, so the tag is never closed', open)
}

function readName(text: string, start: number): string {
  let end = start
  // Code points, not UTF-16 units, so a letter outside the BMP is one name character.
  while (end < text.length) {
    const char = String.fromCodePoint(text.codePointAt(end)!)
    if (!nameChar.test(char)) break
    end += char.length
  }
  return text.slice(start, end)
}

function checkKey(key: string, position: number): void {
  if (forbiddenKeys.has(key)) fail('forbidden_key', `"${key}" cannot be read through a template`, position)
}

function skipSpace(text: string, start: number): number {
  let at = start
  while (at < text.length && space.test(text[at]!)) at++
  return at
}

function quoteChar(text: string, at: number): string {
  return at >= text.length ? 'the end of the text' : JSON.stringify(text[at])
}
