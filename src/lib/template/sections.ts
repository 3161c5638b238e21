import type { PathPart } from './ast.js'
import { isData, isPlainObject, lookupPath } from './lookup.js'
import { parseTemplate } from './parse.js'

/**
 * A logic-less document template (lenses' html and md bodies): a subset of Mustache built on this
 * folder's path grammar and lookup. `{{ path }}` writes a value through the caller's `escape` (always:
 * there is no unescaped form), `{{# path }}…{{/ path }}` repeats its body for each item of a list (once
 * for any other truthy value), `{{^ path }}…{{/ path }}` renders when the value is missing, false, null,
 * "" or an empty list, `{{! text }}` is a comment, `{{ . }}` is the current item, `\{{` a literal `{{`.
 * Refused when parsed: `{{{ }}}` and `{{& }}` (unescaped output), `{{> }}` (partials), `{{= }}`
 * (expressions, delimiter changes). Nothing is evaluated; only own data properties are ever read.
 */

export interface SectionSyntaxError {
  readonly code:
    | 'unclosed_tag'
    | 'empty_tag'
    | 'invalid_path'
    | 'forbidden_key'
    | 'unsupported_tag'
    | 'unclosed_section'
    | 'unexpected_close'
    | 'too_deep'
    | 'too_long'
  readonly message: string
  readonly position: number
}

type Node =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'value'; readonly path: PathPart | null; readonly source: string }
  | {
      readonly kind: 'section'
      readonly inverted: boolean
      readonly path: PathPart | null
      readonly source: string
      readonly children: readonly Node[]
    }

export interface SectionTemplate {
  readonly nodes: readonly Node[]
}

/** Longest template text and deepest section nesting accepted. */
export const sectionLimits = { maxLength: 200_000, maxDepth: 20 } as const

class Failure {
  constructor(readonly error: SectionSyntaxError) {}
}

function fail(code: SectionSyntaxError['code'], message: string, position: number): never {
  throw new Failure({ code, message: `${message} (at offset ${position})`, position })
}

/** Parses a section template. Never throws: a malformed one answers its first error with the offset. */
export function parseSectionTemplate(
  text: string,
): { ok: true; template: SectionTemplate } | { ok: false; error: SectionSyntaxError } {
  try {
    if (text.length > sectionLimits.maxLength)
      fail('too_long', `A template holds at most ${sectionLimits.maxLength} characters`, sectionLimits.maxLength)
    return { ok: true, template: Object.freeze({ nodes: parseNodes(text) }) }
  } catch (err) {
    if (err instanceof Failure) return { ok: false, error: err.error }
    throw err
  }
}

/** The names a template reads, as written (section and value paths; `.` left out): for save-time checks. */
export function sectionPaths(template: SectionTemplate): PathPart[] {
  const out: PathPart[] = []
  const walk = (nodes: readonly Node[]) => {
    for (const node of nodes) {
      if (node.kind === 'text') continue
      if (node.path) out.push(node.path)
      if (node.kind === 'section') walk(node.children)
    }
  }
  walk(template.nodes)
  return out
}

/** `.` or a path of this folder's grammar (`row.title`, `items[0]`); forbidden keys refused. */
function pathOf(name: string, position: number): PathPart | null {
  if (name === '.') return null
  const parsed = parseTemplate(`{{${name}}}`)
  if (!parsed.ok)
    fail(
      parsed.error.code === 'forbidden_key' ? 'forbidden_key' : 'invalid_path',
      parsed.error.message.replace(/ \(at offset \d+\)$/, ''),
      position,
    )
  const whole = parsed.template.whole
  if (!whole || whole.kind !== 'path') fail('invalid_path', `"${name.slice(0, 60)}" is not a path`, position)
  return { ...whole, source: `{{${name}}}`, position }
}

function parseNodes(text: string): Node[] {
  const root: Node[] = []
  // Open sections: their children so far, the name they close with, where they opened.
  const stack: {
    children: Node[]
    name: string
    inverted: boolean
    path: PathPart | null
    source: string
    position: number
  }[] = []
  const current = () => (stack.length > 0 ? stack[stack.length - 1]!.children : root)
  let literal = ''
  let at = 0
  const flush = () => {
    if (literal !== '') current().push(Object.freeze({ kind: 'text', text: literal }))
    literal = ''
  }
  for (;;) {
    const open = text.indexOf('{{', at)
    if (open === -1) break
    if (open > 0 && text[open - 1] === '\\') {
      literal += `${text.slice(at, open - 1)}{{`
      at = open + 2
      continue
    }
    literal += text.slice(at, open)
    const close = text.indexOf('}}', open + 2)
    if (close === -1) fail('unclosed_tag', '{{ has no }} after it', open)
    const raw = text.slice(open + 2, close)
    const source = text.slice(open, close + 2)
    at = close + 2
    const sigil = raw.trimStart()[0] ?? ''
    if (sigil === '!') continue
    if (sigil === '{' || sigil === '&')
      fail(
        'unsupported_tag',
        'Unescaped output ({{{ }}} and {{& }}) is not supported: every value is escaped for the format',
        open,
      )
    if (sigil === '>') fail('unsupported_tag', 'Partials ({{> }}) are not supported', open)
    if (sigil === '=') fail('unsupported_tag', 'Expressions and delimiter changes ({{= }}) are not supported', open)
    const name = (sigil === '#' || sigil === '^' || sigil === '/' ? raw.trimStart().slice(1) : raw).trim()
    if (name === '') fail('empty_tag', 'Empty tag', open)
    flush()
    if (sigil === '#' || sigil === '^') {
      if (stack.length >= sectionLimits.maxDepth)
        fail('too_deep', `Sections nest at most ${sectionLimits.maxDepth} deep`, open)
      stack.push({ children: [], name, inverted: sigil === '^', path: pathOf(name, open), source, position: open })
    } else if (sigil === '/') {
      const top = stack.pop()
      if (!top || top.name !== name)
        fail(
          'unexpected_close',
          top
            ? `{{/${name.slice(0, 60)}}} closes {{${top.inverted ? '^' : '#'}${top.name.slice(0, 60)}}}`
            : `{{/${name.slice(0, 60)}}} closes no section`,
          open,
        )
      current().push(
        Object.freeze({
          kind: 'section',
          inverted: top.inverted,
          path: top.path,
          source: top.source,
          children: Object.freeze(top.children),
        }),
      )
    } else {
      current().push(Object.freeze({ kind: 'value', path: pathOf(name, open), source }))
    }
  }
  literal += text.slice(at)
  flush()
  const unclosed = stack.pop()
  if (unclosed)
    fail(
      'unclosed_section',
      `{{${unclosed.inverted ? '^' : '#'}${unclosed.name.slice(0, 60)}}} is never closed`,
      unclosed.position,
    )
  return root
}

export interface SectionRenderOptions {
  /** Turns a value into output text (HTML entities, Markdown escapes, …). Given null for a missing value. */
  readonly escape: (value: unknown) => string
  /** Longest output; past it rendering stops with SectionRenderLimit. */
  readonly maxLength?: number
  /**
   * Most work a render may do (default 2,000,000 steps): a text counts 1, a tag and a section pass count
   * the levels of sections they search or copy. Past it rendering stops with SectionRenderLimit.
   */
  readonly maxSteps?: number
}

/** The output would pass `maxLength` (`what: 'length'`), or the rendering `maxSteps` (`what: 'steps'`). */
export class SectionRenderLimit extends Error {
  constructor(
    readonly limit: number,
    readonly what: 'length' | 'steps' = 'length',
  ) {
    super(
      what === 'length'
        ? `The output would be longer than ${limit} characters`
        : `Rendering would take more than ${limit} steps (sections nested over long lists)`,
    )
    this.name = 'SectionRenderLimit'
  }
}

/**
 * Renders over plain data: a name is looked up in the innermost section item holding it, then outwards.
 * Bounded in output and in work: sections nested over lists multiply (20 levels over 1,000 rows would be
 * 1,000^20 passes) even when they write nothing. Throws SectionRenderLimit.
 */
export function renderSectionTemplate(template: SectionTemplate, data: unknown, options: SectionRenderOptions): string {
  const maxLength = options.maxLength ?? 10_000_000
  const maxSteps = options.maxSteps ?? 2_000_000
  const out: string[] = []
  let length = 0
  let steps = 0
  const write = (text: string) => {
    length += text.length
    if (length > maxLength) throw new SectionRenderLimit(maxLength)
    out.push(text)
  }
  const step = (cost: number) => {
    steps += cost
    if (steps > maxSteps) throw new SectionRenderLimit(maxSteps, 'steps')
  }
  const lookup = (stack: readonly unknown[], path: PathPart | null): unknown => {
    if (path === null) return stack[stack.length - 1]
    for (let i = stack.length - 1; i >= 0; i--) {
      const frame = stack[i]
      if (!isPlainObject(frame) || !Object.prototype.hasOwnProperty.call(frame, path.root)) continue
      const found = lookupPath(frame, path)
      return found.ok ? found.value : null
    }
    return null
  }
  const walk = (nodes: readonly Node[], stack: readonly unknown[]) => {
    step(stack.length)
    for (const node of nodes) {
      step(node.kind === 'text' || node.path === null ? 1 : stack.length)
      if (node.kind === 'text') write(node.text)
      else if (node.kind === 'value') write(options.escape(lookup(stack, node.path)))
      else {
        const value = lookup(stack, node.path)
        const empty =
          value === null ||
          value === undefined ||
          value === false ||
          value === '' ||
          (Array.isArray(value) && value.length === 0)
        if (node.inverted) {
          if (empty) walk(node.children, stack)
        } else if (!empty) {
          if (Array.isArray(value)) for (const item of value) walk(node.children, [...stack, item])
          else walk(node.children, isData(value) ? [...stack, value] : stack)
        }
      }
    }
  }
  walk(template.nodes, [data])
  return out.join('')
}
