import { Cron } from 'croner'
import { AppError } from '../errors.js'

/** A checked cron pattern in a time zone: the cron arithmetic of every schedule, memory and Redis alike. */
export interface CronSchedule {
  readonly pattern: string
  readonly timezone: string
  /** The first fire time strictly after `after` (ms since the epoch), or null when it never fires again. */
  next(after: number): number | null
  /** The last fire time strictly before `before`, or null when there is none. */
  previous(before: number): number | null
}

export const defaultTimezone = 'UTC'

// An IANA name (`Europe/Berlin`, `Etc/GMT+1`, `UTC`); offsets such as `+01:00` are not time zones here,
// even on a Node whose Intl accepts them, so a schedule means the same on every supported Node.
const zoneName = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/

/**
 * Checks a cron pattern and an IANA time zone with croner and returns the schedule they define.
 * Patterns have 5 fields (minute precision) or 6 (a leading seconds field), or are a nickname such as
 * `@hourly`; day-of-month and day-of-week match either (Vixie cron), `+` before day-of-week requires both;
 * `L`, `W` and `#` work as croner documents. Daylight-saving changes follow croner (docs/queue.md).
 * Throws AppError validation_error (field `pattern` or `timezone`) for a bad value, a one-off date, or a
 * pattern that never fires again (such as 30 February).
 */
export function parseSchedule(pattern: string, timezone: string = defaultTimezone): CronSchedule {
  checkTimezone(timezone)
  if (typeof pattern !== 'string' || pattern.trim() === '' || pattern.length > 200) {
    throw invalid('pattern', `Invalid cron pattern ${JSON.stringify(pattern)}: expected 5 or 6 space-separated fields`)
  }
  let cron: Cron
  try {
    cron = new Cron(pattern, { timezone, mode: '5-or-6-parts', paused: true })
  } catch (err) {
    throw invalid('pattern', `Invalid cron pattern ${JSON.stringify(pattern)}: ${reason(err)}`)
  }
  // croner also takes an ISO date as a run-once "pattern"; a schedule repeats.
  if (cron.getOnce() !== null)
    throw invalid('pattern', `Invalid cron pattern ${JSON.stringify(pattern)}: a date, not a repeating pattern`)
  const schedule: CronSchedule = {
    pattern,
    timezone,
    next: (after) => cron.nextRun(new Date(after))?.getTime() ?? null,
    previous: (before) => cron.previousRuns(1, new Date(before))[0]?.getTime() ?? null,
  }
  // Without a year field a pattern that matches no date from 1970 on never matches any.
  if (schedule.next(0) === null)
    throw invalid('pattern', `Invalid cron pattern ${JSON.stringify(pattern)}: it never fires`)
  return schedule
}

/** Throws AppError validation_error unless `timezone` is an IANA time zone name this Node knows. */
export function checkTimezone(timezone: string): void {
  let known = false
  if (typeof timezone === 'string' && zoneName.test(timezone)) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone })
      known = true
    } catch {
      known = false
    }
  }
  if (!known)
    throw invalid(
      'timezone',
      `Invalid time zone ${JSON.stringify(timezone)}: expected an IANA name such as "Europe/Berlin" or "UTC"`,
    )
}

function invalid(field: 'pattern' | 'timezone', message: string): AppError {
  return new AppError('validation_error', message, { field })
}

function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  return message.replace(/^Cron\w*:\s*/, '')
}
