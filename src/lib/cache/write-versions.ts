import { randomInt } from 'node:crypto'
import type { Redis } from 'ioredis'
import { closeRedis, connectRedis } from '../redis/connect-redis.js'

/**
 * A version per key (one per collection) that every write moves, so what was computed from the data at one
 * version (a cached count, an ETag) is known stale by anyone reading a later one. Shared by every instance
 * through Redis in scale-out; in process otherwise (one instance, decision 004).
 *
 * A version is an opaque string that never comes back: a key seen for the first time starts at a random
 * value, not at 0, so a restart (memory) or a flushed Redis cannot bring back a version a client still
 * holds in an ETag with other data behind it.
 */
export interface WriteVersions {
  /** True when every instance sees the same versions (Redis). */
  readonly shared: boolean
  /** The key's current version. Rejects when Redis cannot answer (the caller then caches nothing). */
  current(key: string): Promise<string>
  /**
   * Moves the key to a new version; resolves once every instance reading it afterwards sees the new one.
   * Call it after the write committed and before the write is answered. Rejects when Redis cannot answer.
   */
  bump(key: string): Promise<void>
  /** Releases the connection. Idempotent. */
  close(): Promise<void>
}

// Starting values stay far below 2^53 so INCR answers are exact JavaScript numbers for ever.
const start = () => randomInt(2 ** 40)

/** Versions in process: for one instance. */
export function createMemoryWriteVersions(): WriteVersions {
  const versions = new Map<string, number>()
  const read = (key: string): number => {
    let version = versions.get(key)
    if (version === undefined) versions.set(key, (version = start()))
    return version
  }
  return {
    shared: false,
    current: (key) => Promise.resolve(String(read(key))),
    bump(key) {
      versions.set(key, read(key) + 1)
      return Promise.resolve()
    },
    close: () => Promise.resolve(),
  }
}

// Both in one round trip, atomic: a missing key is created at the random start the caller sent.
const currentScript = `
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1])
  v = ARGV[1]
end
return v
`
const bumpScript = `
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1]) end
return redis.call('INCR', KEYS[1])
`

interface ScriptedRedis extends Redis {
  plinthVersionCurrent(key: string, start: number): Promise<string>
  plinthVersionBump(key: string, start: number): Promise<number>
}

/**
 * Versions every instance on the same Redis and prefix shares, stored as `${prefix}${key}` (no expiry: a
 * key per collection). Throws Error (no AppError code) when Redis cannot be reached, at creation or later.
 */
export async function createRedisWriteVersions(
  url: string,
  prefix: string,
  options: { onError?: (err: unknown) => void } = {},
): Promise<WriteVersions> {
  const client = (await connectRedis(url, 'versions', options.onError ?? (() => {}))) as ScriptedRedis
  client.defineCommand('plinthVersionCurrent', { numberOfKeys: 1, lua: currentScript })
  client.defineCommand('plinthVersionBump', { numberOfKeys: 1, lua: bumpScript })
  let closed = false
  const assertOpen = () => {
    if (closed) throw new Error('WriteVersions is closed')
  }
  return {
    shared: true,
    async current(key) {
      assertOpen()
      return String(await client.plinthVersionCurrent(prefix + key, start()))
    },
    async bump(key) {
      assertOpen()
      await client.plinthVersionBump(prefix + key, start())
    },
    async close() {
      if (closed) return
      closed = true
      await closeRedis(client)
    },
  }
}
