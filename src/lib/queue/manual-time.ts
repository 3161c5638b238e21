import type { Clock } from '../clock.js'
import type { Timer } from './timer.js'

/** A clock and a timer that move only when a test says so. For tests. */
export interface ManualTime {
  readonly clock: Clock
  readonly timer: Timer
  /** Moves time forward by `ms`, firing every timer that falls due on the way, in order, each at its own time. */
  advance(ms: number): Promise<void>
  /** Moves time forward by `ms` as a suspended machine would: what fell due on the way fires late, at the new time. */
  jump(ms: number): Promise<void>
}

interface Pending {
  readonly due: number
  readonly order: number
  readonly fn: () => void
}

/** Lets queued callbacks (setImmediate) and the promise chains they start run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

export function createManualTime(start: number): ManualTime {
  let now = start
  let order = 0
  const pending = new Set<Pending>()
  const clock: Clock = { now: () => now, seconds: () => Math.floor(now / 1000) }
  const timer: Timer = (ms, fn) => {
    const entry: Pending = { due: now + Math.max(0, ms), order: order++, fn }
    pending.add(entry)
    return () => void pending.delete(entry)
  }
  return {
    clock,
    timer,
    async advance(ms) {
      await settle()
      const target = now + ms
      for (;;) {
        let first: Pending | null = null
        for (const entry of pending) {
          if (entry.due <= target && (!first || entry.due < first.due || (entry.due === first.due && entry.order < first.order))) first = entry
        }
        if (!first) break
        pending.delete(first)
        now = Math.max(now, first.due)
        first.fn()
        await settle()
      }
      now = target
      await settle()
    },
    async jump(ms) {
      await settle()
      now += ms
      await this.advance(0)
    },
  }
}
