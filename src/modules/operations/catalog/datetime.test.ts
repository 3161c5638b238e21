import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../../lib/clock-manual.js'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { datetime } from './datetime.js'

// The run clock: 2026-03-28T23:30:00Z (Sunday 00:30 in Paris, the night the clocks go forward).
const nowMs = Date.UTC(2026, 2, 28, 23, 30)
const run = async (config: Record<string, unknown>) =>
  (
    (await datetime.run(
      datetime.configSchema.parse(config),
      testContext({}, { clock: createManualClock(nowMs) }).ctx,
    )) as { result: unknown }
  ).result
const safe = (config: Record<string, unknown>) => datetime.configSchema.safeParse(config).success

describe('datetime: operations', () => {
  it.each([
    ['now, in UTC by default', { operation: 'now' }, '2026-03-28T23:30:00.000Z'],
    ['now ignores a value', { operation: 'now', value: '2020-01-01T00:00:00Z' }, '2026-03-28T23:30:00.000Z'],
    ['now in a zone', { operation: 'now', timezone: 'Europe/Paris' }, '2026-03-29T00:30:00.000+01:00'],
    [
      'now, formatted',
      { operation: 'now', timezone: 'America/New_York', format: 'yyyy-MM-dd HH:mm ZZZZ' },
      '2026-03-28 19:30 EDT',
    ],
    [
      'format a date',
      { operation: 'format', value: '2026-01-05T08:09:10Z', format: 'cccc d LLLL yyyy, HH:mm:ss' },
      'Monday 5 January 2026, 08:09:10',
    ],
    [
      'format in a zone',
      { operation: 'format', value: '2026-07-01T12:00:00Z', format: 'HH:mm ZZ', timezone: 'Asia/Tokyo' },
      '21:00 +09:00',
    ],
    ['format epoch milliseconds', { operation: 'format', value: 0, format: 'yyyy-MM-dd' }, '1970-01-01'],
    [
      'parse ISO 8601 with an offset (the instant kept)',
      { operation: 'parse', value: '2026-06-01T10:00:00+02:00' },
      '2026-06-01T08:00:00.000Z',
    ],
    [
      'parse ISO without an offset: in the zone',
      { operation: 'parse', value: '2026-06-01T10:00', timezone: 'Europe/Paris' },
      '2026-06-01T10:00:00.000+02:00',
    ],
    ['parse RFC 2822', { operation: 'parse', value: 'Tue, 01 Dec 2026 10:00:00 +0000' }, '2026-12-01T10:00:00.000Z'],
    ['parse SQL', { operation: 'parse', value: '2026-12-01 10:00:00' }, '2026-12-01T10:00:00.000Z'],
    [
      'parse with a format',
      { operation: 'parse', value: '31/12/2026 23:59', format: 'dd/MM/yyyy HH:mm', timezone: 'Europe/Berlin' },
      '2026-12-31T23:59:00.000+01:00',
    ],
    [
      'add days across the DST change keeps the wall clock',
      { operation: 'add', value: '2026-03-28T12:00:00', amount: 1, unit: 'days', timezone: 'Europe/Paris' },
      '2026-03-29T12:00:00.000+02:00',
    ],
    [
      'add hours across the DST change counts real hours',
      { operation: 'add', value: '2026-03-28T12:00:00', amount: 24, unit: 'hours', timezone: 'Europe/Paris' },
      '2026-03-29T13:00:00.000+02:00',
    ],
    [
      'add months to the end of a month',
      { operation: 'add', value: '2026-01-31T00:00:00Z', amount: 1, unit: 'months' },
      '2026-02-28T00:00:00.000Z',
    ],
    ['add to now', { operation: 'add', amount: 90, unit: 'minutes' }, '2026-03-29T01:00:00.000Z'],
    [
      'add an amount from a template (text)',
      { operation: 'add', value: '2026-01-01T00:00:00Z', amount: '2', unit: 'weeks' },
      '2026-01-15T00:00:00.000Z',
    ],
    [
      'subtract',
      { operation: 'subtract', value: '2026-03-01T00:00:00Z', amount: 1, unit: 'years' },
      '2025-03-01T00:00:00.000Z',
    ],
    [
      'subtract milliseconds',
      { operation: 'subtract', value: '2026-03-01T00:00:00Z', amount: 1, unit: 'milliseconds' },
      '2026-02-28T23:59:59.999Z',
    ],
    [
      'subtract, formatted',
      { operation: 'subtract', value: '2026-03-01T00:00:00Z', amount: 1, unit: 'days', format: 'yyyy-MM-dd' },
      '2026-02-28',
    ],
    [
      'diff in days (value minus compareTo)',
      { operation: 'diff', value: '2026-03-10T00:00:00Z', compareTo: '2026-03-01T00:00:00Z', unit: 'days' },
      9,
    ],
    ['diff against now, in hours', { operation: 'diff', value: '2026-03-29T23:30:00Z', unit: 'hours' }, 24],
    ['diff in milliseconds by default', { operation: 'diff', value: '2026-03-28T23:30:01Z' }, 1000],
    ['diff in seconds, negative', { operation: 'diff', value: '2026-03-28T23:29:00Z', unit: 'seconds' }, -60],
    ['diff in minutes', { operation: 'diff', value: '2026-03-28T23:45:00Z', unit: 'minutes' }, 15],
    ['diff in months', { operation: 'diff', value: '2026-06-28T23:30:00Z', unit: 'months' }, 3],
    [
      'startOf day in a zone',
      { operation: 'startOf', value: '2026-03-29T10:00:00+02:00', unit: 'days', timezone: 'Europe/Paris' },
      '2026-03-29T00:00:00.000+01:00',
    ],
    [
      'startOf week (Monday)',
      { operation: 'startOf', value: '2026-03-26T10:00:00Z', unit: 'weeks' },
      '2026-03-23T00:00:00.000Z',
    ],
    [
      'startOf year',
      { operation: 'startOf', value: '2026-03-26T10:00:00Z', unit: 'years' },
      '2026-01-01T00:00:00.000Z',
    ],
    ['endOf month', { operation: 'endOf', value: '2026-02-10T10:00:00Z', unit: 'months' }, '2026-02-28T23:59:59.999Z'],
    ['endOf hour', { operation: 'endOf', value: '2026-02-10T10:20:00Z', unit: 'hours' }, '2026-02-10T10:59:59.999Z'],
    [
      'endOf second',
      { operation: 'endOf', value: '2026-02-10T10:20:00.123Z', unit: 'seconds' },
      '2026-02-10T10:20:00.999Z',
    ],
  ])('%s', async (_name, config, result) => {
    expect(await run(config)).toEqual(result)
  })

  it.each([
    ['text that is no date', { operation: 'parse', value: 'next tuesday' }, /value is not a date/],
    [
      'an empty value (an unresolved template) is not now',
      { operation: 'format', value: '', format: 'yyyy' },
      /value is not a date/,
    ],
    [
      'text not in the format',
      { operation: 'parse', value: '2026-12-31', format: 'dd/MM/yyyy' },
      /in the format dd\/MM\/yyyy/,
    ],
    ['a bad compareTo', { operation: 'diff', value: '2026-01-01', compareTo: 'soon' }, /compareTo is not a date/],
    [
      'a result out of range',
      { operation: 'add', value: '2026-01-01T00:00:00Z', amount: 1e9, unit: 'years' },
      /not a date/,
    ],
  ])('fails with datetime_failed: %s', async (_name, config, message) => {
    const attempt = run(config)
    await expect(attempt).rejects.toBeInstanceOf(StepError)
    await expect(attempt).rejects.toMatchObject({
      code: 'datetime_failed',
      retryable: false,
      message: expect.stringMatching(message),
    })
  })
})

describe('datetime: config', () => {
  it('operation is one of the eight; unit one of the eight', () => {
    expect(safe({})).toBe(false)
    expect(safe({ operation: 'tomorrow' })).toBe(false)
    for (const unit of ['milliseconds', 'seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'years'])
      expect(safe({ operation: 'startOf', unit })).toBe(true)
    expect(safe({ operation: 'startOf', unit: 'day' })).toBe(false)
    expect(safe({ operation: 'startOf', unit: 'quarters' })).toBe(false)
  })
  it('each operation asks for what it needs', () => {
    expect(safe({ operation: 'now' })).toBe(true)
    expect(safe({ operation: 'parse' })).toBe(false)
    expect(safe({ operation: 'format', value: 0 })).toBe(false)
    expect(safe({ operation: 'add', amount: 1 })).toBe(false)
    expect(safe({ operation: 'add', unit: 'days' })).toBe(false)
    expect(safe({ operation: 'subtract', amount: 1, unit: 'days' })).toBe(true)
    expect(safe({ operation: 'endOf' })).toBe(false)
    expect(safe({ operation: 'diff', value: 0 })).toBe(true)
  })
  it('bounds: amount ±1e9, format 1-200 characters, value text up to 200, an IANA zone (UTC by default)', () => {
    expect(datetime.configSchema.parse({ operation: 'now' })).toEqual({ operation: 'now', timezone: 'UTC' })
    expect(safe({ operation: 'add', unit: 'days', amount: 1e9 })).toBe(true)
    expect(safe({ operation: 'add', unit: 'days', amount: -1e9 })).toBe(true)
    expect(safe({ operation: 'add', unit: 'days', amount: 1e9 + 1 })).toBe(false)
    expect(safe({ operation: 'add', unit: 'days', amount: -1e9 - 1 })).toBe(false)
    expect(safe({ operation: 'format', format: '' })).toBe(false)
    expect(safe({ operation: 'format', format: 'y'.repeat(200) })).toBe(true)
    expect(safe({ operation: 'format', format: 'y'.repeat(201) })).toBe(false)
    expect(safe({ operation: 'parse', value: 'x'.repeat(200) })).toBe(true)
    expect(safe({ operation: 'parse', value: 'x'.repeat(201) })).toBe(false)
    for (const zone of ['Europe/Paris', 'America/Argentina/Buenos_Aires', 'UTC', 'Etc/GMT+5'])
      expect(safe({ operation: 'now', timezone: zone }), zone).toBe(true)
    for (const zone of ['Mars/Olympus', '', 'Europe/Paris; DROP', '+02:00'])
      expect(safe({ operation: 'now', timezone: zone }), zone).toBe(false)
    expect(safe({ operation: 'now', other: 1 })).toBe(false)
  })
})
