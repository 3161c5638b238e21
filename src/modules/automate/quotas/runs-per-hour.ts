import type { TimeSource } from '../../../lib/clock.js'
import type { RateLimiter } from '../../../lib/ratelimit/index.js'
import type { Limits } from './limits.js'
import { quotaExceeded } from './service.js'

const hourMs = 3_600_000

export type RunsPerHour = ReturnType<typeof createRunsPerHour>

/**
 * The runs-per-hour quota (automation spec "Quotas"): one counter per project and clock hour, shared through
 * the rate limiter (Redis in scale-out). Runs, dry runs and script tests all count (decision 045): each
 * evaluates as much as a run does.
 */
export function createRunsPerHour(deps: {
  limiter: RateLimiter
  clock: TimeSource
  limits(projectId: string): Promise<Pick<Limits, 'maxRunsPerHour'>>
}) {
  const key = (projectId: string) => `automate-runs:${projectId}:${Math.floor(deps.clock.now() / hourMs)}`
  return {
    /** Counts one against the project's hour; throws quota_exceeded (403) over the limit. */
    async count(projectId: string, limit?: number): Promise<void> {
      const max = limit ?? (await deps.limits(projectId)).maxRunsPerHour
      const verdict = await deps.limiter.hit(key(projectId), max, hourMs)
      if (!verdict.allowed) throw quotaExceeded('maxRunsPerHour', max, max)
    },
    /** What the enforcing counter says of this hour (refused attempts included). */
    counted: (projectId: string) => deps.limiter.count(key(projectId)),
  }
}
