import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TimeSource } from '../clock.js'
import { closeRedis, connectRedis } from '../redis/connect-redis.js'
import { createMemoryRateLimiter } from './memory-rate-limiter.js'
import { runRateLimiterContract } from './rate-limiter-contract.js'
import { createRedisRateLimiter } from './redis-rate-limiter.js'

let now = 1_700_000_000_000
const clock: TimeSource = { now: () => now, seconds: () => Math.floor(now / 1000) }

runRateLimiterContract('memory', {
  shared: false,
  shortWindowMs: 300,
  open: async () => createMemoryRateLimiter({ clock }),
  elapse: async (ms) => {
    now += ms
  },
})

// Set means "run against this Redis": an unreachable server fails every test rather than skipping them.
const redisUrl = process.env.TEST_REDIS_URL
if (redisUrl) {
  // One prefix per file run, so concurrent runs on the same Redis never share a counter.
  const prefix = `plinth-test:${randomUUID()}:`
  runRateLimiterContract('redis', {
    shared: true,
    shortWindowMs: 300,
    open: () => createRedisRateLimiter(redisUrl, prefix),
    elapse: (ms) => sleep(ms),
  })
}

if (redisUrl) {
  describe('redis rate limiter', () => {
    const prefix = `plinth-test:${randomUUID()}:`
    let raw: Redis
    beforeAll(async () => {
      raw = await connectRedis(redisUrl, 'test', () => {})
    })
    afterAll(async () => {
      if (raw) await closeRedis(raw)
    })

    it('stores each key under the prefix, expiring with the window', async () => {
      const limiter = await createRedisRateLimiter(redisUrl, prefix)
      try {
        await limiter.hit('ip', 3, 60_000)
        expect(await raw.get(`${prefix}ip`)).toBe('1')
        expect(await raw.pttl(`${prefix}ip`)).toBeGreaterThan(55_000)
      } finally {
        await limiter.close()
      }
    })

    it('gives a counter that lost its expiry a window again instead of blocking forever', async () => {
      await raw.set(`${prefix}stuck`, '10')
      const limiter = await createRedisRateLimiter(redisUrl, prefix)
      try {
        expect(await limiter.hit('stuck', 3, 60_000)).toMatchObject({ allowed: false, retryAfterSeconds: 60 })
        expect(await raw.pttl(`${prefix}stuck`)).toBeGreaterThan(55_000)
      } finally {
        await limiter.close()
      }
    })
  })
}
