import { randomBytes } from 'node:crypto'

/**
 * A new run's id: 32 lower-case hex characters like every id (lib/ids.ts), the first 12 the creation time
 * in milliseconds and the other 20 random (80 bits). Runs and their step logs are keyed by it: ids that
 * grow with time land at the end of those primary-key indexes, so a batch of new runs touches a few pages
 * instead of one random page per run (the pages each commit writes to the WAL, and each checkpoint copies).
 */
export function newRunId(now = Date.now()): string {
  return now.toString(16).padStart(12, '0').slice(-12) + randomBytes(10).toString('hex')
}
