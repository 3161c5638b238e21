import type { TimeSource } from '../clock.js'
import { assertHitArguments, toResult, type RateLimiter } from './rate-limiter.js'

export interface MemoryRateLimiterOptions {
  readonly clock: TimeSource
  /**
   * The most keys held at once (default 100,000). Past it the oldest window is forgotten, which lets
   * that key start afresh: a flood of distinct keys costs accuracy, never unbounded memory.
   */
  readonly maxKeys?: number
}

export interface MemoryRateLimiter extends RateLimiter {
  /** Keys currently held, expired ones not yet swept included. */
  readonly size: number
}

interface Window {
  count: number
  readonly endsAt: number
}

// Expired windows are swept at most this often, so a busy limiter never scans its map per hit.
const sweepEveryMs = 1000

/** A RateLimiter for the embedded mode, counting in this process only. Throws RangeError on bad arguments, Error once closed. */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions): MemoryRateLimiter {
  const { clock } = options
  const maxKeys = options.maxKeys ?? 100_000
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1)
    throw new RangeError(`maxKeys must be a positive integer, got ${maxKeys}`)
  // Insertion order is the order windows opened in: the first entry is the oldest.
  const windows = new Map<string, Window>()
  let nextSweepAt = clock.now() + sweepEveryMs
  let closed = false

  function sweep(now: number): void {
    for (const [key, window] of windows) if (window.endsAt <= now) windows.delete(key)
    nextSweepAt = now + sweepEveryMs
  }

  function open(key: string, now: number, windowMs: number): Window {
    windows.delete(key)
    if (windows.size >= maxKeys) sweep(now)
    if (windows.size >= maxKeys) {
      const oldest = windows.keys().next()
      if (!oldest.done) windows.delete(oldest.value)
    }
    const window: Window = { count: 0, endsAt: now + windowMs }
    windows.set(key, window)
    return window
  }

  return {
    async hit(key, limit, windowMs) {
      assertHitArguments(limit, windowMs)
      if (closed) throw new Error('RateLimiter is closed')
      const now = clock.now()
      if (now >= nextSweepAt) sweep(now)
      let window = windows.get(key)
      if (!window || window.endsAt <= now) window = open(key, now, windowMs)
      window.count++
      return toResult(window.count, limit, window.endsAt - now)
    },
    async count(key) {
      if (closed) throw new Error('RateLimiter is closed')
      const window = windows.get(key)
      return window && window.endsAt > clock.now() ? window.count : 0
    },
    async close() {
      closed = true
      windows.clear()
    },
    get size() {
      return windows.size
    },
  }
}
