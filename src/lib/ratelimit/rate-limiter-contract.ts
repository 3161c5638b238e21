import { afterEach, describe, expect, it } from 'vitest'
import type { RateLimiter } from './rate-limiter.js'

export interface RateLimiterFixture {
  /** Opens one limiter, as one Plinth process would. */
  open(): Promise<RateLimiter>
  /** Lets time pass: the memory run moves its fake clock, the Redis run sleeps. */
  elapse(ms: number): Promise<void>
  /** True when two opened limiters share their counts (Redis), false when each counts alone (memory). */
  readonly shared: boolean
  /** A window short enough to wait out when time is real. */
  readonly shortWindowMs: number
}

// Long enough that no window closes during a test in the Redis run, however slow the machine.
const longWindowMs = 60_000

/** The behaviour every RateLimiter shares. */
export function runRateLimiterContract(name: string, fixture: RateLimiterFixture): void {
  describe(`RateLimiter contract: ${name}`, () => {
    const opened: RateLimiter[] = []
    let run = 0
    // Each test gets keys of its own, so tests never see each other's windows.
    const key = (k: string) => `${run}:${k}`
    async function open(): Promise<RateLimiter> {
      const limiter = await fixture.open()
      opened.push(limiter)
      return limiter
    }
    afterEach(async () => {
      run++
      await Promise.all(opened.splice(0).map((l) => l.close()))
    })

    it('allows exactly `limit` hits per window, then refuses with a Retry-After', async () => {
      const limiter = await open()
      const results = []
      for (let i = 0; i < 5; i++) results.push(await limiter.hit(key('ip'), 3, longWindowMs))
      expect(results.slice(0, 3)).toEqual([
        { allowed: true, remaining: 2, retryAfterSeconds: 0 },
        { allowed: true, remaining: 1, retryAfterSeconds: 0 },
        { allowed: true, remaining: 0, retryAfterSeconds: 0 },
      ])
      for (const refused of results.slice(3)) {
        expect(refused).toMatchObject({ allowed: false, remaining: 0 })
        expect(Number.isInteger(refused.retryAfterSeconds)).toBe(true)
        expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(55)
        expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60)
      }
    })

    it('says at least one second even when less than a second is left', async () => {
      const limiter = await open()
      await limiter.hit(key('ip'), 1, fixture.shortWindowMs)
      expect(await limiter.hit(key('ip'), 1, fixture.shortWindowMs)).toEqual({
        allowed: false,
        remaining: 0,
        retryAfterSeconds: 1,
      })
    })

    it('count tells the hits of the current window without counting one, refused hits included', async () => {
      const limiter = await open()
      expect(await limiter.count(key('c'))).toBe(0)
      for (let i = 0; i < 3; i++) await limiter.hit(key('c'), 2, fixture.shortWindowMs)
      expect(await limiter.count(key('c'))).toBe(3)
      expect(await limiter.count(key('c'))).toBe(3)
      await fixture.elapse(fixture.shortWindowMs + 50)
      expect(await limiter.count(key('c'))).toBe(0)
    })

    it('counts keys independently', async () => {
      const limiter = await open()
      await limiter.hit(key('a'), 1, longWindowMs)
      expect((await limiter.hit(key('a'), 1, longWindowMs)).allowed).toBe(false)
      expect(await limiter.hit(key('b'), 1, longWindowMs)).toEqual({
        allowed: true,
        remaining: 0,
        retryAfterSeconds: 0,
      })
    })

    it('admits again once the window has passed', async () => {
      const limiter = await open()
      const windowMs = fixture.shortWindowMs
      expect((await limiter.hit(key('ip'), 2, windowMs)).allowed).toBe(true)
      expect((await limiter.hit(key('ip'), 2, windowMs)).allowed).toBe(true)
      expect((await limiter.hit(key('ip'), 2, windowMs)).allowed).toBe(false)
      await fixture.elapse(windowMs + 50)
      expect(await limiter.hit(key('ip'), 2, windowMs)).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 0 })
    })

    it('allows exactly `limit` of many simultaneous hits', async () => {
      const one = await open()
      const two = await open()
      const hits = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two).hit(key('burst'), 5, longWindowMs))
      const allowed = (await Promise.all(hits)).filter((r) => r.allowed).length
      expect(allowed).toBe(fixture.shared ? 5 : 10)
    })

    it(fixture.shared ? 'shares one count between instances' : 'counts each instance alone', async () => {
      const one = await open()
      const two = await open()
      expect((await one.hit(key('ip'), 2, longWindowMs)).remaining).toBe(1)
      const second = await two.hit(key('ip'), 2, longWindowMs)
      if (fixture.shared) {
        expect(second).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 })
        expect((await one.hit(key('ip'), 2, longWindowMs)).allowed).toBe(false)
        expect((await two.hit(key('ip'), 2, longWindowMs)).allowed).toBe(false)
      } else {
        expect(second).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 0 })
      }
    })

    it('refuses a limit or window that is not a positive integer', async () => {
      const limiter = await open()
      for (const [limit, windowMs] of [
        [0, 1000],
        [-1, 1000],
        [1.5, 1000],
        [Number.NaN, 1000],
        [1, 0],
        [1, 2.5],
        [1, Number.POSITIVE_INFINITY],
      ] as const) {
        await expect(limiter.hit(key('ip'), limit, windowMs), `${limit}, ${windowMs}`).rejects.toThrow(RangeError)
      }
    })

    it('closes idempotently and refuses hits afterwards', async () => {
      const limiter = await open()
      await limiter.hit(key('ip'), 1, longWindowMs)
      await limiter.close()
      await limiter.close()
      await expect(limiter.hit(key('ip'), 1, longWindowMs)).rejects.toThrow(/closed/)
    })
  })
}
