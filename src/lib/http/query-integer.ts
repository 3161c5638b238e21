import { z } from '@hono/zod-openapi'

// At most 15 digits: every such number is a safe integer, and a longer one is no page, limit or version.
const unsigned = /^\d{1,15}$/
const signed = /^-?\d{1,15}$/

export interface QueryIntegerOptions {
  /** A leading `-` is accepted only when `min` is absent or negative. */
  min?: number
  max?: number
  /** The value when the parameter is absent (an empty value is still refused). */
  default?: number
}

function integerSchema({ min, max }: QueryIntegerOptions) {
  const negatives = min === undefined || min < 0
  let number = z.number().int()
  if (min !== undefined) number = number.min(min)
  if (max !== undefined) number = number.max(max)
  const written = negatives ? 'decimal digits, optionally after a -' : 'decimal digits'
  return z
    .string()
    .regex(negatives ? signed : unsigned, `Expected a whole number in ${written} (at most 15)`)
    .transform(Number)
    .pipe(number)
}

type QueryInteger = ReturnType<typeof integerSchema>

/**
 * An integer query parameter: decimal digits only (a leading `-` only where `min` allows negatives), at
 * most 15 of them, then `min` and `max`. `z.coerce.number` read an empty value as 0 and took hex (`0x10`),
 * binary (`0b10`) and exponents (`1e1`); this takes only what a person writes, and anything else fails
 * validation: 400 invalid_request naming the parameter (route.ts). OpenAPI shows an integer with its
 * bounds and default (the pipe alone would show the input string).
 */
export function queryInteger(options: QueryIntegerOptions & { default: number }): z.ZodDefault<QueryInteger>
export function queryInteger(options?: QueryIntegerOptions): QueryInteger
export function queryInteger(options: QueryIntegerOptions = {}): QueryInteger | z.ZodDefault<QueryInteger> {
  const { min, max } = options
  const shown = {
    type: 'integer' as const,
    ...(min === undefined ? {} : { minimum: min }),
    ...(max === undefined ? {} : { maximum: max }),
  }
  const schema = integerSchema(options)
  if (options.default === undefined) return schema.openapi(shown)
  return schema.default(options.default).openapi({ ...shown, default: options.default })
}
