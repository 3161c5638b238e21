import { z } from 'zod'
import { JsonTooLarge, parseJsonBounded } from '../../../lib/json-bounds.js'
import { parseItemPath, readItemPath } from '../item-path.js'
import { requiredValue } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** The longest JSON text json_parse reads (10 MB). */
export const maxJsonTextLength = 10_000_000

/**
 * Parses JSON text (a list or object given by a whole-value template is taken as it is), then reads
 * `path` in it when one is given (`data.items[0].sku`, `data.items.0.sku`). Output `{ result }`; a path
 * that finds nothing gives null and a warning in the step log. Text that is not JSON fails the step with
 * json_parse_failed.
 */
export const jsonParse = defineOperation({
  type: 'json_parse',
  category: 'transform',
  label: 'JSON parse',
  description: 'Parses JSON text and optionally reads a dot path in it; output { result }.',
  effects: 'none',
  configSchema: z.strictObject({
    input: requiredValue().describe('The JSON text (a template such as {{$steps.fetch.body}})'),
    path: z
      .string()
      .max(500)
      .optional()
      .superRefine((value, ctx) => {
        const parsed = value === undefined ? null : parseItemPath(value)
        if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed })
      })
      .describe('A dot path to read in the parsed value (data.items.0.sku)'),
  }),
  async run(config, ctx) {
    let value: unknown = config.input
    if (typeof config.input === 'string') {
      const text = config.input
      if (text.length > maxJsonTextLength)
        throw new StepError(
          'json_parse_failed',
          `The text is longer than ${maxJsonTextLength} characters`,
          {},
          400,
          false,
        )
      try {
        value = parseJsonBounded(text)
      } catch (err) {
        if (err instanceof JsonTooLarge)
          throw new StepError('json_parse_failed', err.message, { limit: err.limit }, 400, false)
        throw new StepError(
          'json_parse_failed',
          `The input is not JSON: ${(err as Error).message}`,
          { preview: text.slice(0, 100) },
          400,
          false,
        )
      }
    }
    if (config.path === undefined || config.path === '') return { result: value }
    const found = readItemPath(value, parseItemPath(config.path) as Exclude<ReturnType<typeof parseItemPath>, string>)
    if (found === undefined)
      ctx.log({ level: 'warn', message: `json_parse: nothing at ${config.path}; the result is null` })
    return { result: found ?? null }
  },
})
