import { afterEach, describe, expect, it, vi } from 'vitest'
import { systemTimer } from './timer.js'

describe('systemTimer', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('waits longer than setTimeout can hold (about 24.8 days) by chaining', () => {
    vi.useFakeTimers()
    const day = 24 * 3_600_000
    let fired = 0
    systemTimer(30 * day, () => fired++)
    vi.advanceTimersByTime(29 * day)
    expect(fired).toBe(0)
    vi.advanceTimersByTime(day)
    expect(fired).toBe(1)
  })

  it('cancels, also after the first link of a chain', () => {
    vi.useFakeTimers()
    const day = 24 * 3_600_000
    let fired = 0
    const cancelShort = systemTimer(10, () => fired++)
    cancelShort()
    const cancelLong = systemTimer(30 * day, () => fired++)
    vi.advanceTimersByTime(26 * day)
    cancelLong()
    vi.advanceTimersByTime(10 * day)
    expect(fired).toBe(0)
  })
})
