import { AppError } from '../errors.js'
import type { TemplateSyntaxError } from './ast.js'
import { isPlainObject } from './lookup.js'
import { parseTemplate } from './parse.js'
import { resolveTemplate, type ResolveOptions, type Unresolved } from './resolve.js'

export interface CheckOptions {
  /** The roots a tag may start with (a flow's `$trigger`, `$steps`…); a tag naming another is unknown_root. Any root when omitted. */
  readonly roots?: readonly string[]
}

/** A template error found in a config, with where: `url`, `headers.Authorization`, `items[2]`. */
export type TemplateIssue = TemplateSyntaxError & { readonly path: string }

/** A tag of a config that gave the empty value, with where it is. */
export type UnresolvedAt = Unresolved & { readonly path: string }

/** Checks one template string without a context: its syntax, and its roots when `roots` is given. Null when it is fine; throws nothing. */
export function checkTemplate(text: string, options: CheckOptions = {}): TemplateSyntaxError | null {
  if (!text.includes('{{')) return null
  const parsed = parseTemplate(text)
  if (!parsed.ok) return parsed.error
  if (!options.roots) return null
  const roots = new Set(options.roots)
  for (const part of parsed.template.parts) {
    if (part.kind === 'path' && !roots.has(part.root)) {
      return {
        code: 'unknown_root',
        message: `${part.root} is not available in templates here (at offset ${part.position})`,
        position: part.position,
      }
    }
  }
  return null
}

/** Checks every string value of a config (arrays and plain objects, any depth; keys are not templates). Throws nothing. */
export function checkTemplates(config: unknown, options: CheckOptions = {}): TemplateIssue[] {
  const issues: TemplateIssue[] = []
  walk(config, '', (text, path) => {
    const error = checkTemplate(text, options)
    if (error) issues.push({ ...error, path })
    return text
  })
  return issues
}

/**
 * What a save does with a config: throws validation_error (422) naming the first bad template, its path
 * and offset, and listing up to 20 in details.issues. `at` prefixes the paths (`operations[2].config`).
 */
export function assertTemplates(config: unknown, options: CheckOptions & { at?: string } = {}): void {
  const issues = checkTemplates(config, options)
  if (issues.length === 0) return
  const prefix = options.at ?? ''
  const shown = issues.slice(0, 20).map((issue) => ({ ...issue, path: prefixed(prefix, issue.path) }))
  const first = shown[0]!
  throw new AppError('validation_error', `Invalid template at ${first.path || 'the value'}: ${first.message}`, {
    issues: shown,
  })
}

/**
 * Resolves every string value of a config (arrays and plain objects, any depth) into a new config; keys
 * and other values are kept as they are. Never throws; every tag that gave the empty value is listed.
 */
export function resolveTemplates(
  config: unknown,
  context: unknown,
  options: ResolveOptions = {},
): { value: unknown; unresolved: UnresolvedAt[] } {
  const unresolved: UnresolvedAt[] = []
  const value = walk(config, '', (text, path) => {
    const result = resolveTemplate(text, context, options)
    for (const miss of result.unresolved) unresolved.push({ ...miss, path })
    return result.value
  })
  return { value, unresolved }
}

function walk(value: unknown, path: string, onString: (text: string, path: string) => unknown): unknown {
  if (typeof value === 'string') return onString(value, path)
  if (Array.isArray(value)) return value.map((item, index) => walk(item, `${path}[${index}]`, onString))
  if (isPlainObject(value)) {
    // A null-prototype result, so a key such as __proto__ in the config stays an ordinary key.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>
    for (const [key, item] of Object.entries(value)) out[key] = walk(item, childPath(path, key), onString)
    return out
  }
  return value
}

const bareKey = /^[A-Za-z_$][A-Za-z0-9_$]*$/

function childPath(path: string, key: string): string {
  if (!bareKey.test(key)) return `${path}[${JSON.stringify(key)}]`
  return path === '' ? key : `${path}.${key}`
}

function prefixed(prefix: string, path: string): string {
  if (prefix === '' || path === '') return prefix + path
  return path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`
}
