import type { Redis } from 'ioredis'
import { closeRedis, connectRedis } from '../redis/connect-redis.js'
import { checkClaims, type Slots } from './slots.js'

// Each key is a sorted set of holder → lease end. One script, atomic across instances: drop expired
// leases, check every claim (a holder already present fits), then take all places or none.
// KEYS: the claimed keys; ARGV: now, leaseMs, holder, then one limit per key.
const acquireScript = `
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local holder = ARGV[3]
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if not redis.call('ZSCORE', key, holder) and redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then return 0 end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + lease, holder)
  redis.call('PEXPIRE', key, lease * 2)
end
return 1
`
// KEYS: the keys; ARGV: now, leaseMs, holder. 1 when every lease was still held.
const renewScript = `
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local all = 1
for _, key in ipairs(KEYS) do
  local expires = redis.call('ZSCORE', key, ARGV[3])
  if expires and tonumber(expires) > now then
    redis.call('ZADD', key, now + lease, ARGV[3])
    redis.call('PEXPIRE', key, lease * 2)
  else
    all = 0
  end
end
return all
`
const countScript = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZCARD', KEYS[1])
`

interface ScriptedRedis extends Redis {
  plinthSlotsAcquire(...args: (string | number)[]): Promise<number>
  plinthSlotsRenew(...args: (string | number)[]): Promise<number>
  plinthSlotsCount(key: string, now: number): Promise<number>
}

/**
 * Slots every instance using the same Redis and prefix shares; keys are stored as `${prefix}${key}`.
 * Throws Error when Redis cannot be reached (at creation or on a call).
 */
export async function createRedisSlots(
  url: string,
  prefix: string,
  options: { onError?: (err: unknown) => void } = {},
): Promise<Slots> {
  const client = (await connectRedis(url, 'slots', options.onError ?? (() => {}))) as ScriptedRedis
  client.defineCommand('plinthSlotsAcquire', { lua: acquireScript })
  client.defineCommand('plinthSlotsRenew', { lua: renewScript })
  client.defineCommand('plinthSlotsCount', { numberOfKeys: 1, lua: countScript })
  let closed = false
  const assertOpen = () => {
    if (closed) throw new Error('Slots are closed')
  }

  return {
    shared: true,
    async acquire(holder, claims, leaseMs, now) {
      assertOpen()
      checkClaims(holder, claims, leaseMs)
      if (claims.length === 0) return true
      const keys = claims.map((c) => prefix + c.key)
      return (
        (await client.plinthSlotsAcquire(keys.length, ...keys, now, leaseMs, holder, ...claims.map((c) => c.limit))) ===
        1
      )
    },
    async renew(holder, keys, leaseMs, now) {
      assertOpen()
      if (keys.length === 0) return true
      return (await client.plinthSlotsRenew(keys.length, ...keys.map((k) => prefix + k), now, leaseMs, holder)) === 1
    },
    async release(holder, keys) {
      assertOpen()
      if (keys.length === 0) return
      const pipeline = client.pipeline()
      for (const key of keys) pipeline.zrem(prefix + key, holder)
      await pipeline.exec()
    },
    async count(key, now) {
      assertOpen()
      return Number(await client.plinthSlotsCount(prefix + key, now))
    },
    async close() {
      closed = true
      await closeRedis(client)
    },
  }
}
