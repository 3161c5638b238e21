import { z } from 'zod'
import { boundedReplace, checkPattern } from '../safe-regex.js'
import { flag, numeric, text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** The longest text text_format starts from or produces. */
export const maxTextLength = 1_000_000
/** The most parts a split gives. */
export const maxParts = 10_000

const position = numeric(z.number().int().min(-maxTextLength).max(maxTextLength))

const TextStep = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('concat'),
    values: z.array(text(100_000)).max(100).default([]),
    separator: text(1000).default(''),
  }),
  z.strictObject({
    type: z.literal('split'),
    separator: text(1000).default(','),
    limit: numeric(z.number().int().min(1).max(maxParts)).optional(),
  }),
  z.strictObject({
    type: z.literal('replace'),
    search: text(10_000, 1),
    replacement: text(100_000).default(''),
    all: flag.default(true),
  }),
  z
    .strictObject({
      type: z.literal('regex_replace'),
      pattern: z.string().min(1).max(500),
      flags: z
        .string()
        .regex(/^[gimsu]*$/, 'flags may be g, i, m, s and u')
        .default('g'),
      replacement: text(100_000).default(''),
    })
    .superRefine((step, ctx) => {
      // As rules.ts' matches: refused is what RE2 cannot run (back-references, lookaround).
      const refused = checkPattern(step.pattern, step.flags.replace('g', ''))
      if (refused) ctx.addIssue({ code: 'custom', path: ['pattern'], message: refused })
    }),
  z.strictObject({ type: z.literal('trim'), side: z.enum(['both', 'start', 'end']).default('both') }),
  z.strictObject({ type: z.literal('uppercase') }),
  z.strictObject({ type: z.literal('lowercase') }),
  z.strictObject({ type: z.literal('substring'), start: position.default(0), end: position.optional() }),
  z.strictObject({
    type: z.literal('pad'),
    length: numeric(z.number().int().min(0).max(10_000)),
    fill: text(100, 1).default(' '),
    side: z.enum(['start', 'end']).default('start'),
  }),
])
type TextStep = z.output<typeof TextStep>

/**
 * Starts from `template` (its templates resolved) and applies the operations in order. After a split the
 * value is a list of texts: the text operations then apply to each part, and concat joins the parts
 * (with its values after them). regex_replace patterns are checked as the condition operator's and run on
 * RE2 under its bounds (100,000 characters, the work bound). substring counts characters (code points), with
 * negative positions from the end. Output `{ result }` (text, or a list of texts after a split).
 */
export const textFormat = defineOperation({
  type: 'text_format',
  category: 'transform',
  label: 'Text format',
  description:
    'Builds text from a template and applies concat, split, replace, regex_replace, trim, uppercase, lowercase, substring, pad in order; output { result }.',
  effects: 'none',
  configSchema: z.strictObject({
    template: text(maxTextLength).default('').describe('The text to start from (templates resolved)'),
    operations: z.array(TextStep).max(50).default([]).describe('Operations applied in order: { type, ...options }'),
  }),
  async run(config) {
    let value: string | string[] = config.template
    for (const [index, operation] of config.operations.entries()) {
      // Checked before the operation runs too: replace and pad can build far more than the bound (1,000,000
      // characters replacing each with 100,000) in one call nothing interrupts.
      const predicted = predictedSize(operation, value)
      if (predicted > maxTextLength)
        throw new StepError(
          'text_format_failed',
          `operations[${index}] (${operation.type}): the result would be longer than ${maxTextLength} characters`,
          { index, type: operation.type },
          400,
          false,
        )
      try {
        value = apply(operation, value)
      } catch (err) {
        throw new StepError(
          'text_format_failed',
          `operations[${index}] (${operation.type}): ${(err as Error).message}`,
          { index, type: operation.type },
          400,
          false,
        )
      }
      const size = typeof value === 'string' ? value.length : value.reduce((n, part) => n + part.length, 0)
      if (size > maxTextLength)
        throw new StepError(
          'text_format_failed',
          `operations[${index}] (${operation.type}): the result is longer than ${maxTextLength} characters`,
          { index, type: operation.type },
          400,
          false,
        )
    }
    return { result: value }
  },
})

function apply(operation: TextStep, value: string | string[]): string | string[] {
  switch (operation.type) {
    case 'concat':
      return [...(Array.isArray(value) ? value : [value]), ...operation.values].join(operation.separator)
    case 'split': {
      if (Array.isArray(value)) throw new Error('the value is already a list (concat joins it)')
      // Split no further than needed: past maxParts it is refused anyway.
      const parts = value.split(operation.separator, operation.limit ?? maxParts + 1)
      if (operation.limit !== undefined) return parts
      if (parts.length > maxParts) throw new Error(`the text splits into more than ${maxParts} parts (set a limit)`)
      return parts
    }
    default:
      return Array.isArray(value) ? value.map((part) => applyToText(operation, part)) : applyToText(operation, value)
  }
}

/** The length of what an operation would give, where one call could build much more than its input (else 0: checked after). */
function predictedSize(operation: TextStep, value: string | string[]): number {
  const parts = Array.isArray(value) ? value : [value]
  const sum = (size: (part: string) => number) => parts.reduce((n, part) => n + size(part), 0)
  switch (operation.type) {
    case 'concat':
      return (
        sum((part) => part.length) +
        operation.values.reduce((n, v) => n + v.length, 0) +
        operation.separator.length * Math.max(0, parts.length + operation.values.length - 1)
      )
    case 'replace':
      if (!operation.all) return sum((part) => part.length + operation.replacement.length)
      return sum(
        (part) =>
          part.length + occurrences(part, operation.search) * (operation.replacement.length - operation.search.length),
      )
    case 'pad':
      return sum((part) => Math.max(part.length, operation.length))
    default:
      return 0
  }
}

function occurrences(text: string, search: string): number {
  let count = 0
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++
  return count
}

function applyToText(operation: Exclude<TextStep, { type: 'concat' | 'split' }>, value: string): string {
  switch (operation.type) {
    case 'replace':
      return operation.all
        ? value.split(operation.search).join(operation.replacement)
        : value.replace(operation.search, () => operation.replacement)
    case 'regex_replace':
      return boundedReplace(new RegExp(operation.pattern, operation.flags), value, operation.replacement, maxTextLength)
    case 'trim':
      return operation.side === 'both' ? value.trim() : operation.side === 'start' ? value.trimStart() : value.trimEnd()
    case 'uppercase':
      return value.toUpperCase()
    case 'lowercase':
      return value.toLowerCase()
    case 'substring':
      return Array.from(value).slice(operation.start, operation.end).join('')
    case 'pad':
      return operation.side === 'start'
        ? value.padStart(operation.length, operation.fill)
        : value.padEnd(operation.length, operation.fill)
  }
}
