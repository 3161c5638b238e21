import type { Redis } from 'ioredis'
import { closeRedis, connectRedis } from '../redis/connect-redis.js'
import { assertHitArguments, toResult, type RateLimiter } from './rate-limiter.js'

// One round trip, atomic across instances: the first hit opens the window, PTTL says how long it has
// left. A key that somehow lost its expiry (-1) is given one again rather than blocking forever.
const hitScript = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`

// defineCommand adds the method at run time (and uses EVALSHA, falling back to EVAL).
interface ScriptedRedis extends Redis {
  plinthRateLimitHit(key: string, windowMs: number): Promise<[number, number]>
}

export interface RedisRateLimiterOptions {
  /** Told about connection errors; defaults to ignoring them (a failing hit rejects anyway). */
  readonly onError?: (err: unknown) => void
}

/**
 * A RateLimiter whose counts every instance using the same Redis and prefix shares; keys are stored as
 * `${prefix}${key}`. Throws Error (no AppError code) when Redis cannot be reached, at creation or on a
 * hit (the caller decides whether to fail open), and RangeError on bad arguments.
 */
export async function createRedisRateLimiter(
  url: string,
  prefix: string,
  options: RedisRateLimiterOptions = {},
): Promise<RateLimiter> {
  const client = (await connectRedis(url, 'ratelimit', options.onError ?? (() => {}))) as ScriptedRedis
  client.defineCommand('plinthRateLimitHit', { numberOfKeys: 1, lua: hitScript })
  let closed = false

  return {
    async hit(key, limit, windowMs) {
      assertHitArguments(limit, windowMs)
      if (closed) throw new Error('RateLimiter is closed')
      const [count, msLeft] = await client.plinthRateLimitHit(prefix + key, windowMs)
      return toResult(count, limit, msLeft)
    },
    async count(key) {
      if (closed) throw new Error('RateLimiter is closed')
      const value = await client.get(prefix + key)
      return value === null ? 0 : Number(value)
    },
    async close() {
      closed = true
      await closeRedis(client)
    },
  }
}
