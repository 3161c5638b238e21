import { jsonSize } from '../json-size.js'
import type { TagPart } from './ast.js'
import type { TemplateBudget } from './budget.js'
import { isData, isPlainObject, lookupPath, type Lookup, type UnresolvedReason } from './lookup.js'
import { parseTemplate, type Parsed } from './parse.js'

export interface ResolveOptions {
  /**
   * Evaluates the code of a `{{= … }}` tag over the context (flows bring JSONata). The template never
   * evaluates anything itself: without this, such a tag is empty with `expression_unavailable`.
   */
  readonly evaluate?: (code: string, context: unknown) => unknown
  /** The longest string an in-string substitution may build, in characters (default 1,000,000). */
  readonly maxLength?: number
  /**
   * Shared by the strings of one config: what their tags produce in all (a whole-value tag by the size of
   * its value's JSON, an in-string one by its text). A string past it resolves to empty with too_long.
   */
  readonly budget?: TemplateBudget
  /** Parses a template (default parseTemplate): a caller that resolves the same strings often passes its kept parses. */
  readonly parse?: (text: string) => Parsed
}

/** A tag that gave the empty value, and why: what flows write to the step log. */
export interface Unresolved {
  /** The tag as written (`{{ $trigger.body.x }}`), or the whole string for invalid_template and too_long. */
  readonly tag: string
  /** Offset of the tag in its string. */
  readonly position: number
  readonly reason: UnresolvedReason
  readonly message: string
}

export interface TemplateResult {
  /** The string with its tags replaced, or, for a string that is exactly one tag, that tag's value with its type. */
  readonly value: unknown
  readonly unresolved: readonly Unresolved[]
}

export const defaultMaxLength = 1_000_000

/**
 * Resolves one template string over plain data. A string that is exactly one tag yields that tag's value
 * with its type (object, array, number, boolean, null; objects and arrays copied); elsewhere values are
 * written into the text (objects and arrays as JSON, null as nothing). A tag that cannot resolve yields
 * the empty string and says why; so does a string that does not parse. Never throws.
 */
export function resolveTemplate(text: string, context: unknown, options: ResolveOptions = {}): TemplateResult {
  if (!text.includes('{{')) return { value: text, unresolved: [] }
  const parsed = (options.parse ?? parseTemplate)(text)
  if (!parsed.ok)
    return {
      value: '',
      unresolved: [
        { tag: text, position: parsed.error.position, reason: 'invalid_template', message: parsed.error.message },
      ],
    }
  const { template } = parsed
  const unresolved: Unresolved[] = []
  if (template.whole) {
    const found = valueOf(template.whole, context, options)
    if (found.ok && options.budget && !options.budget.spend(jsonSize(found.value, options.budget.left))) {
      unresolved.push(overBudget(template.whole.source, template.whole.position, options.budget))
    } else if (found.ok) {
      const copied = copy(found.value)
      if (copied.ok) return { value: copied.value, unresolved }
      unresolved.push(miss(template.whole, copied))
    } else {
      unresolved.push(miss(template.whole, found))
    }
    return { value: '', unresolved }
  }
  const maxLength = options.maxLength ?? defaultMaxLength
  let out = ''
  for (const part of template.parts) {
    if (part.kind === 'text') {
      out += part.text
    } else {
      const found = valueOf(part, context, options)
      const written = found.ok ? stringify(found.value, part) : found
      if (written.ok) out += written.value as string
      else unresolved.push(miss(part, written))
    }
    if (out.length > maxLength) {
      return {
        value: '',
        unresolved: [
          ...unresolved,
          {
            tag: text,
            position: 0,
            reason: 'too_long',
            message: `The text would be longer than ${maxLength} characters`,
          },
        ],
      }
    }
  }
  if (options.budget && !options.budget.spend(out.length))
    return { value: '', unresolved: [...unresolved, overBudget(text, 0, options.budget)] }
  return { value: out, unresolved }
}

function overBudget(tag: string, position: number, budget: TemplateBudget): Unresolved {
  return {
    tag,
    position,
    reason: 'too_long',
    message: `The templates of this config would give more than ${budget.limit} characters in all`,
  }
}

/** Like resolveTemplate, but always text: a string that is exactly one tag is written as in-string (send_email's templates). */
export function renderTemplateText(
  text: string,
  context: unknown,
  options: ResolveOptions = {},
): { text: string; unresolved: readonly Unresolved[] } {
  const result = resolveTemplate(text, context, options)
  if (typeof result.value === 'string') return { text: result.value, unresolved: result.unresolved }
  const written = stringify(result.value, null)
  return written.ok
    ? { text: written.value as string, unresolved: result.unresolved }
    : { text: '', unresolved: [{ tag: text, position: 0, reason: written.reason, message: written.message }] }
}

function valueOf(tag: TagPart, context: unknown, options: ResolveOptions): Lookup {
  if (tag.kind === 'path') return lookupPath(context, tag)
  if (!options.evaluate)
    return { ok: false, reason: 'expression_unavailable', message: 'Expressions ({{= … }}) are not evaluated here' }
  let value: unknown
  try {
    value = options.evaluate(tag.code, context)
  } catch (err) {
    const why = err instanceof Error ? err.message.slice(0, 200) : 'it failed'
    return { ok: false, reason: 'expression_failed', message: `The expression failed: ${why}` }
  }
  if (value === undefined) return { ok: false, reason: 'missing_key', message: 'The expression has no value' }
  return isData(value)
    ? { ok: true, value }
    : { ok: false, reason: 'not_data', message: 'The expression gave something that is not plain data' }
}

/** Objects and arrays are handed out as copies: a step that changes its input changes nothing another step reads. */
function copy(value: unknown): Lookup {
  if (typeof value !== 'object' || value === null) return { ok: true, value }
  try {
    return { ok: true, value: structuredClone(value) }
  } catch {
    return { ok: false, reason: 'not_data', message: 'The value holds something that is not plain data' }
  }
}

function stringify(value: unknown, tag: TagPart | null): Lookup {
  if (value === null || value === undefined) return { ok: true, value: '' }
  if (typeof value === 'string') return { ok: true, value }
  if (typeof value === 'number' || typeof value === 'boolean') return { ok: true, value: String(value) }
  if (Array.isArray(value) || isPlainObject(value)) {
    try {
      return { ok: true, value: JSON.stringify(value) }
    } catch {
      // A cycle or a BigInt: nothing a flow's data holds, but never a crash.
      return {
        ok: false,
        reason: 'not_serialisable',
        message: `${tag?.source ?? 'The value'} cannot be written as JSON`,
      }
    }
  }
  return { ok: false, reason: 'not_data', message: `${tag?.source ?? 'The value'} is not plain data` }
}

function miss(tag: TagPart, lookup: Extract<Lookup, { ok: false }>): Unresolved {
  return { tag: tag.source, position: tag.position, reason: lookup.reason, message: `${tag.source}: ${lookup.message}` }
}
