import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { parseSchedule } from './cron.js'

/** The next `n` fire times after `from`, as ISO strings. */
function fires(pattern: string, timezone: string | undefined, from: string, n: number): string[] {
  const schedule = parseSchedule(pattern, timezone)
  const out: string[] = []
  let at = Date.parse(from)
  for (let i = 0; i < n; i++) {
    const next = schedule.next(at)
    if (next === null) break
    out.push(new Date(next).toISOString())
    at = next
  }
  return out
}

describe('parseSchedule: fire times (croner)', () => {
  const cases: Array<[string, string, string | undefined, string, string[]]> = [
    [
      'top of the hour, UTC by default',
      '0 * * * *',
      undefined,
      '2025-01-01T00:00:00.250Z',
      ['2025-01-01T01:00:00.000Z', '2025-01-01T02:00:00.000Z'],
    ],
    [
      'a leading seconds field',
      '*/20 * * * * *',
      'UTC',
      '2025-01-01T00:00:05.000Z',
      ['2025-01-01T00:00:20.000Z', '2025-01-01T00:00:40.000Z'],
    ],
    ['strictly after the given time', '0 0 * * *', 'UTC', '2025-01-01T00:00:00.000Z', ['2025-01-02T00:00:00.000Z']],
    ['a nickname', '@hourly', 'UTC', '2025-01-01T00:30:00.000Z', ['2025-01-01T01:00:00.000Z']],
    [
      '09:00 in Berlin in winter (CET)',
      '0 9 * * *',
      'Europe/Berlin',
      '2025-01-15T00:00:00.000Z',
      ['2025-01-15T08:00:00.000Z'],
    ],
    [
      '09:00 in Berlin in summer (CEST)',
      '0 9 * * *',
      'Europe/Berlin',
      '2025-07-15T00:00:00.000Z',
      ['2025-07-15T07:00:00.000Z'],
    ],
    ['an alias of an IANA zone', '0 9 * * *', 'US/Eastern', '2025-01-15T00:00:00.000Z', ['2025-01-15T14:00:00.000Z']],
    // 02:30 does not exist on 30 March 2025 in Berlin: a fixed-time job runs after the gap, that day.
    [
      'a fixed time in the spring-forward gap',
      '30 2 * * *',
      'Europe/Berlin',
      '2025-03-29T12:00:00.000Z',
      ['2025-03-30T01:00:00.000Z', '2025-03-31T00:30:00.000Z'],
    ],
    // 02:30 happens twice on 26 October 2025 in Berlin: a fixed-time job runs once, at the first.
    [
      'a fixed time in the repeated fall-back hour',
      '30 2 * * *',
      'Europe/Berlin',
      '2025-10-25T12:00:00.000Z',
      ['2025-10-26T00:30:00.000Z', '2025-10-27T01:30:00.000Z'],
    ],
    // An interval job runs through the repeated hour, both times round.
    [
      'an interval through the repeated hour',
      '*/30 * * * *',
      'Europe/Berlin',
      '2025-10-26T00:00:00.000Z',
      ['2025-10-26T00:30:00.000Z', '2025-10-26T01:00:00.000Z', '2025-10-26T01:30:00.000Z', '2025-10-26T02:00:00.000Z'],
    ],
    [
      '03:00 in New York on the spring-forward day',
      '0 3 * * *',
      'America/New_York',
      '2025-03-09T00:00:00.000Z',
      ['2025-03-09T07:00:00.000Z', '2025-03-10T07:00:00.000Z'],
    ],
    [
      'day of month OR day of week (Vixie cron)',
      '0 0 1 * MON',
      'UTC',
      '2025-01-01T00:00:00.000Z',
      ['2025-01-06T00:00:00.000Z', '2025-01-13T00:00:00.000Z'],
    ],
    ['`+` requires both', '0 0 1 * +MON', 'UTC', '2025-01-01T00:00:00.000Z', ['2025-09-01T00:00:00.000Z']],
    ['L: the last day of the month', '0 0 L * *', 'UTC', '2025-02-10T00:00:00.000Z', ['2025-02-28T00:00:00.000Z']],
    [
      '29 February fires in leap years only',
      '0 0 29 2 *',
      'UTC',
      '2025-01-01T00:00:00.000Z',
      ['2028-02-29T00:00:00.000Z'],
    ],
  ]
  it.each(cases)('%s', (_, pattern, timezone, from, expected) => {
    expect(fires(pattern, timezone, from, expected.length)).toEqual(expected)
  })

  it('finds the fire time strictly before a time', () => {
    const hourlyBerlin = parseSchedule('0 * * * *', 'Europe/Berlin')
    expect(hourlyBerlin.previous(Date.parse('2025-01-01T05:00:00.000Z'))).toBe(Date.parse('2025-01-01T04:00:00.000Z'))
    expect(hourlyBerlin.previous(Date.parse('2025-01-01T05:00:00.001Z'))).toBe(Date.parse('2025-01-01T05:00:00.000Z'))
  })

  it('keeps the pattern and the time zone it was given', () => {
    expect(parseSchedule('0 9 * * *', 'Europe/Berlin')).toMatchObject({
      pattern: '0 9 * * *',
      timezone: 'Europe/Berlin',
    })
    expect(parseSchedule('0 9 * * *')).toMatchObject({ timezone: 'UTC' })
  })
})

describe('parseSchedule: refused with a clear error', () => {
  const cases: Array<[string, string, string | undefined, 'pattern' | 'timezone', RegExp]> = [
    [
      'a minute out of range',
      '61 * * * *',
      'UTC',
      'pattern',
      /Invalid cron pattern "61 \* \* \* \*": Invalid value for minute: 61/,
    ],
    ['a word', 'nonsense', 'UTC', 'pattern', /Invalid cron pattern "nonsense": .*parts/],
    ['four fields', '* * * *', 'UTC', 'pattern', /Invalid cron pattern/],
    ['a year field (7 fields)', '0 0 0 1 1 * 2030', 'UTC', 'pattern', /requires exactly 5 or 6 parts/],
    ['an empty pattern', '', 'UTC', 'pattern', /Invalid cron pattern ""/],
    ['a one-off date', '2030-01-23T00:00:00', 'UTC', 'pattern', /a date, not a repeating pattern/],
    ['a date that never comes', '0 0 30 2 *', 'UTC', 'pattern', /it never fires/],
    ['@reboot', '@reboot', 'UTC', 'pattern', /Invalid cron pattern "@reboot"/],
    ['a step without a range', '5/5 * * * *', 'UTC', 'pattern', /stepping/],
    ['a day of week out of range', '0 0 * * 8', 'UTC', 'pattern', /dayOfWeek/],
    [
      'an unknown zone',
      '0 * * * *',
      'Mars/Olympus',
      'timezone',
      /Invalid time zone "Mars\/Olympus": expected an IANA name/,
    ],
    ['an offset, not a zone', '0 * * * *', '+01:00', 'timezone', /Invalid time zone "\+01:00"/],
    ['an empty zone', '0 * * * *', '', 'timezone', /Invalid time zone ""/],
    ['a zone with a trailing space', '0 * * * *', 'Europe/Berlin ', 'timezone', /Invalid time zone/],
    ['a path', '0 * * * *', '../../etc/passwd', 'timezone', /Invalid time zone/],
  ]
  it.each(cases)('%s', (_, pattern, timezone, field, message) => {
    let thrown: unknown
    try {
      parseSchedule(pattern, timezone)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(AppError)
    expect(thrown).toMatchObject({ code: 'validation_error', status: 422, details: { field } })
    expect((thrown as Error).message).toMatch(message)
  })

  it('checks the time zone before the pattern, so a bad zone is named even with a bad pattern', () => {
    expect(() => parseSchedule('nonsense', 'Mars/Olympus')).toThrow(/time zone/)
  })
})
