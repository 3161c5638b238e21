import { z } from 'zod'
import { FormulaError, evaluateFormula, maxFormulaLength } from '../formula.js'
import { numberOf } from '../rules.js'
import { numeric } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

const aggregates = ['sum', 'avg', 'min', 'max'] as const
const unary = ['round', 'floor', 'ceil', 'abs'] as const
type MathOperation = (typeof aggregates)[number] | (typeof unary)[number] | 'formula'

const mathError = (message: string) => new StepError('math_error', message, {}, 400, false)

/**
 * Arithmetic: sum, avg, min, max over `values`; round, floor, ceil, abs of its one value; or a `formula`
 * (formula.ts). Values are numbers or strings spelling numbers. `precision` (0-20 decimals) rounds the
 * result half away from zero (round defaults to 0; floor and ceil work at that many decimals).
 */
export const math = defineOperation({
  type: 'math',
  category: 'transform',
  label: 'Math',
  description:
    'Computes sum, avg, min, max over values, round, floor, ceil, abs of one value, or a formula (+ - * / % ^, parentheses, min max abs round floor ceil sqrt); output { result }.',
  effects: 'none',
  configSchema: z
    .strictObject({
      operation: z.enum([...aggregates, ...unary, 'formula']).describe('What to compute'),
      values: z
        .array(z.union([z.number(), z.string().max(100)]))
        .max(10_000)
        .optional()
        .describe('The numbers (or strings spelling numbers); a template may give the whole list'),
      formula: z
        .union([z.string().min(1).max(maxFormulaLength), z.number()])
        .optional()
        .describe('An arithmetic formula; templates are resolved into it first'),
      precision: numeric(z.number().int().min(0).max(20)).optional().describe('Decimals to round the result to (0-20)'),
    })
    .superRefine((config, ctx) => {
      if (config.operation === 'formula') {
        if (config.formula === undefined)
          ctx.addIssue({ code: 'custom', path: ['formula'], message: 'formula needs a formula' })
      } else if (config.values === undefined) {
        ctx.addIssue({ code: 'custom', path: ['values'], message: `${config.operation} needs values` })
      } else if ((unary as readonly string[]).includes(config.operation) && config.values.length !== 1) {
        ctx.addIssue({ code: 'custom', path: ['values'], message: `${config.operation} takes exactly one value` })
      }
    }),
  async run(config) {
    const result = compute(config.operation, config.values ?? [], config.formula, config.precision)
    return { result }
  },
})

function compute(
  operation: MathOperation,
  raw: readonly (number | string)[],
  formula: string | number | undefined,
  precision: number | undefined,
): number {
  if (operation === 'formula') {
    try {
      return roundTo(evaluateFormula(String(formula)), precision, Math.round)
    } catch (err) {
      if (err instanceof FormulaError) throw mathError(`formula: ${err.message}`)
      throw err
    }
  }
  const values = raw.map((value, index) => {
    const n = numberOf(value)
    if (n === null) throw mathError(`values[${index}] is not a number: ${JSON.stringify(value).slice(0, 50)}`)
    return n
  })
  if (operation === 'sum')
    return roundTo(
      values.reduce((a, b) => a + b, 0),
      precision,
      Math.round,
    )
  if (values.length === 0) throw mathError(`${operation} needs at least one value`)
  switch (operation) {
    case 'avg':
      return roundTo(values.reduce((a, b) => a + b, 0) / values.length, precision, Math.round)
    case 'min':
      return roundTo(
        values.reduce((a, b) => Math.min(a, b)),
        precision,
        Math.round,
      )
    case 'max':
      return roundTo(
        values.reduce((a, b) => Math.max(a, b)),
        precision,
        Math.round,
      )
    case 'round':
      return roundTo(values[0]!, precision ?? 0, Math.round)
    case 'floor':
      return roundTo(values[0]!, precision ?? 0, Math.floor)
    case 'ceil':
      return roundTo(values[0]!, precision ?? 0, Math.ceil)
    case 'abs':
      return roundTo(Math.abs(values[0]!), precision, Math.round)
  }
}

/** `value` at `precision` decimals through `fn` (round: half away from zero), shifting the decimal point in the text so 1.005 rounds to 1.01. */
export function roundTo(value: number, precision: number | undefined, fn: (x: number) => number): number {
  if (!Number.isFinite(value)) throw mathError('the result is not a finite number')
  if (precision === undefined) return value
  const apply = fn === Math.round ? (x: number) => Math.sign(x) * Math.round(Math.abs(x)) : fn
  const result = shift(apply(shift(value, precision)), -precision)
  if (!Number.isFinite(result)) throw mathError('the result is not a finite number')
  return result === 0 ? 0 : result
}

function shift(value: number, places: number): number {
  const [mantissa, exponent] = value.toExponential().split('e') as [string, string]
  return Number(`${mantissa}e${Number(exponent) + places}`)
}
