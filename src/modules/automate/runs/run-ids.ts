import { randomUUID } from 'node:crypto'

/**
 * A new run's id: 32 lower-case hex characters like every id (lib/ids.ts), the first 12 the creation time
 * in milliseconds and the other 20 random (80 bits). Runs and their step logs are keyed by it: ids that
 * grow with time land at the end of those primary-key indexes, so a batch of new runs touches a few pages
 * instead of one random page per run (the pages each commit writes to the WAL, and each checkpoint copies).
 */
export function newRunId(now = Date.now()): string {
  // randomUUID draws from Node's pooled entropy; randomBytes(10) asks the system for each id (issue 33: 1.5%
  // of a webhook run's CPU). Of a v4 UUID's 32 hex digits, these 20 are all random (the version and variant
  // digits are left out).
  const u = randomUUID()
  return now.toString(16).padStart(12, '0').slice(-12) + u.slice(0, 8) + u.slice(9, 13) + u.slice(24, 32)
}
