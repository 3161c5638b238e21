import { z } from 'zod'
import { isRecord } from './config-paths.js'
import { parseRule } from './rules.js'

/**
 * Building blocks of the catalog's config schemas. Templates resolve to typed values, and an in-string
 * template always gives text, so numbers accept numeric strings (`"{{$trigger.body.wait}}000"`) and text
 * accepts numbers, booleans and JSON values (written as JSON). The JSON Schema shows the plain type.
 */

/** A number field that also takes a string spelling a number. */
export function numeric<T extends z.ZodType<number>>(schema: T) {
  return z.preprocess(
    (value) =>
      typeof value === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value) ? Number(value) : value,
    schema,
  )
}

/** A text field that also takes what a whole-value template may give: numbers and booleans as written, null as empty, objects and arrays as JSON. */
export function text(max: number, min = 0) {
  return z.preprocess(
    (value) => {
      if (typeof value === 'number' || typeof value === 'boolean') return String(value)
      if (value === null) return ''
      if (Array.isArray(value) || isRecord(value)) return JSON.stringify(value)
      return value
    },
    z
      .string()
      .min(min, min === 1 ? 'Required' : `At least ${min} characters`)
      .max(max),
  )
}

/** A value of any JSON type that must be present (z.unknown alone would let it be left out). */
export function requiredValue() {
  return z.unknown().refine((value) => value !== undefined, 'Required')
}

/** The step key pattern of the automation model (a template name). */
export const stepKeyPattern = /^[A-Za-z_][\w-]{0,99}$/

/** A nested step as saved in a branch or a loop body; its type and config are checked as a step of their own (checkSteps). */
export const NestedStepSchema = z.object({
  key: z.string().regex(stepKeyPattern, 'must be 1-100 letters, digits, _ or -, starting with a letter or _'),
  type: z.string().min(1).max(100),
  config: z.record(z.string(), z.unknown()).default({}),
  condition: z.unknown().optional(),
  onError: z.enum(['stop', 'continue', 'retry', 'fallback']).default('stop'),
  retryConfig: z
    .object({
      maxAttempts: z.number().int().min(1).max(10).default(3),
      delayMs: z.number().int().min(0).max(60_000).default(1000),
      backoff: z.enum(['fixed', 'exponential']).default('fixed'),
    })
    .optional(),
  fallbackValue: z.unknown().optional(),
})

/** A list of nested steps (up to 100). */
export const StepListSchema = z.array(NestedStepSchema).max(100)

/**
 * A condition rule tree (rules.ts), checked by parseRule: each problem becomes an issue at its own path
 * (`rules._and[1].operator`), marked so a save keeps it even where a template stands.
 */
export function ruleTree() {
  return z
    .unknown()
    .superRefine((tree, ctx) => {
      if (tree === undefined) {
        ctx.addIssue({ code: 'custom', message: 'Required', params: { rule: true } })
        return
      }
      const parsed = parseRule(tree)
      if (parsed.ok) return
      for (const issue of parsed.issues)
        ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.path], params: { rule: true } })
    })
    .meta({
      type: 'object',
      description: 'A rule tree: { field, operator, value } compared, or { _and: [...] } / { _or: [...] } combined',
    })
}

/** A boolean that also takes its spelling ("true", "false"), which an in-string template gives. */
export const flag = z.preprocess((value) => (value === 'true' ? true : value === 'false' ? false : value), z.boolean())
