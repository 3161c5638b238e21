import { DateTime, IANAZone, type DurationUnit } from 'luxon'
import { z } from 'zod'
import { numeric, text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

const units = ['milliseconds', 'seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'years'] as const
type Unit = (typeof units)[number]
/** luxon's singular unit names (startOf, endOf). */
const singular: Record<Unit, 'millisecond' | 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year'> = {
  milliseconds: 'millisecond',
  seconds: 'second',
  minutes: 'minute',
  hours: 'hour',
  days: 'day',
  weeks: 'week',
  months: 'month',
  years: 'year',
}
// Formats are written in one locale, so a flow gives the same text on every server.
const locale = 'en-US'

// An offset ("+02:00") is no IANA name, but newer ICU (Node 26) accepts it as a zone: refused on every Node alike.
const zone = z
  .string()
  .min(1)
  .max(100)
  .refine(
    (name) => !/^[+-]/.test(name) && IANAZone.isValidZone(name),
    'must be an IANA time zone such as Europe/Paris or UTC',
  )

/** A date as a flow gives it: ISO 8601 (or RFC 2822, HTTP, SQL) text, or milliseconds since the epoch. */
const dateValue = z.union([z.string().max(200), z.number()])

/**
 * Dates with luxon, in an IANA `timezone` (UTC by default; daylight-saving included): now, format
 * (luxon tokens, `yyyy-MM-dd HH:mm`), parse (ISO 8601, RFC 2822, HTTP or SQL text, epoch milliseconds,
 * or `format` when given), add and subtract `amount` `unit`s, diff (`value` minus `compareTo`, now by
 * default, in `unit`), startOf and endOf a unit. `value` is the run clock's now when left out (not when
 * empty: an unresolved template fails, never silently now); parse needs one. Output `{ result }`: ISO
 * 8601 text in the zone (or `format`ted), a number for diff. A value that is no date, or a result out of
 * range, fails the step with datetime_failed.
 */
export const datetime = defineOperation({
  type: 'datetime',
  category: 'transform',
  label: 'Date and time',
  description:
    'now, format, parse, add, subtract, diff, startOf, endOf on dates (luxon; IANA time zones, UTC by default); output { result }.',
  effects: 'none',
  configSchema: z
    .strictObject({
      operation: z
        .enum(['now', 'format', 'parse', 'add', 'subtract', 'diff', 'startOf', 'endOf'])
        .describe('What to do'),
      value: dateValue
        .optional()
        .describe('The date: ISO 8601 text or epoch milliseconds (a template); now when left out, except for parse'),
      amount: numeric(z.number().min(-1e9).max(1e9)).optional().describe('How many units to add or subtract'),
      unit: z
        .enum(units)
        .optional()
        .describe('The unit of add, subtract, diff (default milliseconds), startOf and endOf'),
      format: text(200, 1)
        .optional()
        .describe(
          'luxon format tokens (yyyy-MM-dd HH:mm): the output of format (and of other operations when given), the input of parse',
        ),
      timezone: zone.default('UTC').describe('An IANA time zone (Europe/Paris); UTC by default'),
      compareTo: dateValue.optional().describe('diff: the date subtracted from value (now by default)'),
    })
    .superRefine((config, ctx) => {
      const need = (field: 'value' | 'amount' | 'unit' | 'format', why: string) => {
        if (config[field] === undefined)
          ctx.addIssue({ code: 'custom', path: [field], message: `${config.operation} needs ${field}${why}` })
      }
      if (config.operation === 'parse') need('value', '')
      if (config.operation === 'format') need('format', ' (luxon tokens such as yyyy-MM-dd)')
      if (config.operation === 'add' || config.operation === 'subtract') {
        need('amount', '')
        need('unit', '')
      }
      if (config.operation === 'startOf' || config.operation === 'endOf') need('unit', ' (days, months, …)')
    }),
  async run(config, ctx) {
    const now = DateTime.fromMillis(ctx.clock.now(), { zone: config.timezone, locale })
    const value =
      config.operation === 'now' || config.value === undefined
        ? now
        : toDate(config.value, config.timezone, config.operation === 'parse' ? config.format : undefined, 'value')
    let result: DateTime
    switch (config.operation) {
      case 'diff': {
        const other =
          config.compareTo === undefined ? now : toDate(config.compareTo, config.timezone, undefined, 'compareTo')
        const unit: DurationUnit = config.unit ?? 'milliseconds'
        const amount = value.diff(other, unit).as(unit)
        if (!Number.isFinite(amount)) throw failed('the difference is not a finite number')
        return { result: amount }
      }
      case 'add':
        result = value.plus({ [config.unit!]: config.amount! })
        break
      case 'subtract':
        result = value.minus({ [config.unit!]: config.amount! })
        break
      case 'startOf':
        result = value.startOf(singular[config.unit!])
        break
      case 'endOf':
        result = value.endOf(singular[config.unit!])
        break
      default:
        result = value
    }
    if (!result.isValid)
      throw failed(`the result is not a date (${result.invalidExplanation ?? result.invalidReason ?? 'out of range'})`)
    const wantsText = config.format !== undefined && config.operation !== 'parse'
    return { result: wantsText ? result.toFormat(config.format!) : result.toISO()! }
  },
})

function failed(message: string): StepError {
  return new StepError('datetime_failed', message, {}, 400, false)
}

/** A date from text or epoch milliseconds, in `zone` (an offset written in the text is kept as the instant). */
function toDate(value: string | number, zone: string, format: string | undefined, what: string): DateTime {
  const options = { zone, locale }
  let date: DateTime
  if (typeof value === 'number') date = DateTime.fromMillis(value, options)
  else if (format !== undefined) date = DateTime.fromFormat(value, format, options)
  else {
    date = DateTime.fromISO(value, options)
    for (const parse of [DateTime.fromRFC2822, DateTime.fromHTTP, DateTime.fromSQL])
      if (!date.isValid) date = parse(value, options)
  }
  if (!date.isValid)
    throw failed(
      `${what} is not a date${format ? ` in the format ${format}` : ''}: ${JSON.stringify(value).slice(0, 60)}`,
    )
  return date.setZone(zone)
}
