import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { createManualTime } from './manual-time.js'
import { createMemoryQueue } from './memory-queue.js'
import { runQueueContract } from './queue-contract.js'
import { createRedisQueue } from './redis-queue.js'

// Memory runs on a manual clock: delays, backoff, ticks and the close bound move only when a test says so.
const time = createManualTime(Date.UTC(2025, 0, 1, 0, 0, 0, 250))
runQueueContract('memory', {
  shared: false,
  manualTime: true,
  open: async (options) => createMemoryQueue({ ...options, clock: time.clock, timer: time.timer }),
  now: () => time.clock.now(),
  advance: (ms) => time.advance(ms),
})

// Set means "run against this Redis": an unreachable server fails every test rather than skipping them.
const redisUrl = process.env.TEST_REDIS_URL
if (redisUrl) {
  // One prefix per file run, so concurrent runs on the same Redis never share a queue.
  const prefix = `plinth-test:${randomUUID()}:`
  runQueueContract('redis', {
    shared: true,
    manualTime: false,
    open: (options) => createRedisQueue(redisUrl, prefix, options),
    now: () => Date.now(),
    advance: async () => {},
  })

  describe('Redis JobQueue: keys', () => {
    it('keeps every key under the deployment prefix', async () => {
      const queue = await createRedisQueue(redisUrl, prefix)
      const ran: string[] = []
      try {
        const jobs = await queue.define<{ x: object }>('prefixed', { handlers: { x: async () => void ran.push('x') } })
        await jobs.add('x', {})
        await jobs.schedule('s', { pattern: '0 0 * * *', job: 'x', data: {} })
        const redis = new Redis(redisUrl)
        try {
          const ours = await redis.keys(`${prefix}queue:prefixed:*`)
          expect(ours.length).toBeGreaterThan(0)
          // BullMQ's default prefix is "bull"; nothing of this queue may land there.
          expect(await redis.keys('bull:prefixed:*')).toEqual([])
        } finally {
          redis.disconnect()
        }
      } finally {
        await queue.close()
      }
    })
  })

  afterAll(async () => {
    const redis = new Redis(redisUrl)
    try {
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.unlink(...keys)
    } finally {
      redis.disconnect()
    }
  })
}
