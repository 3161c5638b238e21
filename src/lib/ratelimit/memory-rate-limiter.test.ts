import { describe, expect, it } from 'vitest'
import type { TimeSource } from '../clock.js'
import { createMemoryRateLimiter } from './memory-rate-limiter.js'

function fakeClock(start = 1_700_000_000_000) {
  let now = start
  const clock: TimeSource = { now: () => now, seconds: () => Math.floor(now / 1000) }
  return { clock, advance: (ms: number) => void (now += ms) }
}

describe('memory rate limiter', () => {
  it.each([
    // ms into a 10 s window when the refused hit comes → Retry-After
    { at: 0, retryAfterSeconds: 10 },
    { at: 1, retryAfterSeconds: 10 },
    { at: 999, retryAfterSeconds: 10 },
    { at: 1000, retryAfterSeconds: 9 },
    { at: 9000, retryAfterSeconds: 1 },
    { at: 9999, retryAfterSeconds: 1 },
  ])('a hit refused $at ms into the window waits $retryAfterSeconds s', async ({ at, retryAfterSeconds }) => {
    const { clock, advance } = fakeClock()
    const limiter = createMemoryRateLimiter({ clock })
    await limiter.hit('k', 1, 10_000)
    advance(at)
    expect(await limiter.hit('k', 1, 10_000)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds })
  })

  it('opens a new window exactly when the old one ends', async () => {
    const { clock, advance } = fakeClock()
    const limiter = createMemoryRateLimiter({ clock })
    await limiter.hit('k', 1, 10_000)
    advance(9_999)
    expect((await limiter.hit('k', 1, 10_000)).allowed).toBe(false)
    advance(1)
    expect((await limiter.hit('k', 1, 10_000)).allowed).toBe(true)
  })

  it('drops expired keys instead of growing', async () => {
    const { clock, advance } = fakeClock()
    const limiter = createMemoryRateLimiter({ clock })
    for (let i = 0; i < 1000; i++) await limiter.hit(`ip-${i}`, 5, 2_000)
    expect(limiter.size).toBe(1000)
    advance(2_000)
    await limiter.hit('late', 5, 2_000)
    expect(limiter.size).toBe(1)
  })

  it('keeps live keys when it sweeps', async () => {
    const { clock, advance } = fakeClock()
    const limiter = createMemoryRateLimiter({ clock })
    await limiter.hit('short', 1, 1_000)
    await limiter.hit('long', 1, 60_000)
    advance(1_500)
    await limiter.hit('other', 1, 1_000)
    expect(limiter.size).toBe(2)
    expect((await limiter.hit('long', 1, 60_000)).allowed).toBe(false)
  })

  it('forgets the oldest window when full of live keys', async () => {
    const { clock, advance } = fakeClock()
    const limiter = createMemoryRateLimiter({ clock, maxKeys: 3 })
    for (const key of ['a', 'b', 'c']) {
      await limiter.hit(key, 1, 60_000)
      advance(10)
    }
    await limiter.hit('d', 1, 60_000)
    expect(limiter.size).toBe(3)
    // "a" was the oldest and starts afresh; "b" is still counted.
    expect((await limiter.hit('b', 1, 60_000)).allowed).toBe(false)
    expect((await limiter.hit('a', 1, 60_000)).allowed).toBe(true)
  })

  it('refuses a maxKeys that is not a positive integer', () => {
    const { clock } = fakeClock()
    expect(() => createMemoryRateLimiter({ clock, maxKeys: 0 })).toThrow(RangeError)
  })
})
