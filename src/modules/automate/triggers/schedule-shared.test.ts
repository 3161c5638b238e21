import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { systemClock } from '../../../lib/clock.js'
import { createRedisQueue } from '../../../lib/queue/index.js'
import { createTriggers } from './create-triggers.js'
import { createFakeFlows, createFakeRuns, fakeDeps, makeFlow } from './fakes.js'

// Two instances on one Redis (TEST_REDIS_URL): both register the same schedule flow at start-up, as every
// instance does, and each tick still starts one run across both.
const redisUrl = process.env.TEST_REDIS_URL

describe.runIf(redisUrl)('schedule trigger on Redis: two instances', () => {
  it('starts one run per tick across both instances', async () => {
    const prefix = `plinth-test:${randomUUID()}:`
    const flow = makeFlow('schedule', { cron: '* * * * * *' }, { id: `every-second-${randomUUID()}` })
    const instances = await Promise.all(
      ['a', 'b'].map(async () => {
        const queue = await createRedisQueue(redisUrl!, prefix)
        const flows = createFakeFlows([flow])
        const runs = createFakeRuns()
        const { deps } = fakeDeps({ clock: systemClock, queue, flows: flows.lookup, runs: runs.runs })
        return { queue, runs, triggers: await createTriggers(deps) }
      }),
    )
    try {
      await new Promise((resolve) => setTimeout(resolve, 4500))
      const ticks = instances.flatMap(({ runs }) =>
        runs.calls.map((call) => (call.trigger.body as { scheduledAt: string }).scheduledAt),
      )
      expect(ticks.length).toBeGreaterThanOrEqual(3)
      expect(new Set(ticks).size).toBe(ticks.length)
    } finally {
      for (const { triggers, queue } of instances) {
        await triggers.close()
        await queue.close()
      }
    }
  }, 20_000)
})
