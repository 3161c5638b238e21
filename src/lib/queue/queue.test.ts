import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createManualClock } from '../clock-manual.js'
import { createMemoryQueue } from './memory-queue.js'
import { runQueueContract } from './queue-contract.js'
import { createRedisQueue } from './redis-queue.js'

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

// Memory runs on a manual clock: delays, backoff, ticks and the close bound move only when a test says so.
const time = createManualClock(Date.UTC(2025, 0, 1, 0, 0, 0, 250))
runQueueContract('memory', {
  shared: false,
  manualTime: true,
  open: async (options) => createMemoryQueue({ ...options, clock: time }),
  now: () => time.now(),
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

  describe('Redis JobQueue: schedules across instances', () => {
    it('an instance whose clock is behind declares a schedule while the tick it computes is running elsewhere', async () => {
      const ahead = await createRedisQueue(redisUrl, prefix)
      const behind = await createRedisQueue(redisUrl, prefix)
      let release = () => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      const ticks: Array<number | null> = []
      try {
        const jobs = await ahead.define<{ tick: object }>('skewed', {
          handlers: {
            tick: async (job) => {
              ticks.push(job.tick)
              await held
            },
          },
        })
        await jobs.schedule('every-second', { pattern: '* * * * * *', job: 'tick', data: {} })
        await until(() => ticks.length === 1, 'the first tick')
        // The first tick is running on `ahead`. `behind`'s clock reads 900 ms before it, so the next tick
        // it computes is the running one; replacing the schedule from there would add that tick again.
        const running = ticks[0]!
        const spy = vi.spyOn(Date, 'now').mockImplementation(() => running - 900)
        try {
          const late = await behind.define<{ tick: object }>('skewed', {
            handlers: { tick: async (job) => void ticks.push(job.tick) },
          })
          await late.schedule('every-second', { pattern: '* * * * * *', job: 'tick', data: {} })
        } finally {
          spy.mockRestore()
        }
        release()
        await until(() => new Set(ticks).size >= 3, 'three ticks')
      } finally {
        release()
        await Promise.all([ahead.close(), behind.close()])
      }
      const perTick = new Map<number | null, number>()
      for (const tick of ticks) perTick.set(tick, (perTick.get(tick) ?? 0) + 1)
      expect([...perTick].filter(([, count]) => count !== 1)).toEqual([])
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
