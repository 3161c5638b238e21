import { clockOn, type Clock, type TimerHost } from './clock.js'

/** A Clock whose time moves only when told: sleeps end and ticks run when `advance` reaches them. */
export interface ManualClock extends Clock {
  /**
   * Moves time on by `ms`, stopping at each due timer in time order (then in the order they were set):
   * a sleep ends, a tick runs and is awaited, so a tick due again within `ms` runs again. Resolves when
   * time has reached the end, every run it started has ended and the code a sleep woke has run up to its
   * next wait. Throws when called while another advance is under way.
   */
  advance(ms: number): Promise<void>
  /**
   * Moves time on by `ms` at once, as a machine that was suspended: what fell due meanwhile fires late, at
   * the new time, in order (each timer once). Resolves as `advance` does.
   */
  jump(ms: number): Promise<void>
  /** Timers waiting: sleeps and ticks not yet due (a stopped ticker's included no more). */
  readonly pending: number
}

interface Timer {
  readonly at: number
  readonly seq: number
  readonly fire: () => unknown
}

/** A manual clock at `startMs` (default: the real time now, so what it stamps looks current). */
export function createManualClock(startMs: number = Date.now()): ManualClock {
  let now = startMs
  let seq = 0
  let advancing = false
  const timers = new Set<Timer>()

  const host: TimerHost = {
    now: () => now,
    schedule(ms, fire) {
      const timer: Timer = { at: now + ms, seq: seq++, fire }
      timers.add(timer)
      return () => void timers.delete(timer)
    },
  }

  function nextDue(until: number): Timer | undefined {
    let next: Timer | undefined
    for (const timer of timers) {
      if (timer.at > until) continue
      if (!next || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq)) next = timer
    }
    return next
  }

  async function advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`advance: ms must be a finite number of at least 0, got ${ms}`)
    if (advancing) throw new Error('advance: another advance is under way')
    advancing = true
    try {
      const until = now + ms
      for (let timer = nextDue(until); timer; timer = nextDue(until)) {
        timers.delete(timer)
        now = Math.max(now, timer.at)
        await timer.fire()
        // What the timer woke runs to its next wait before time moves on.
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
      now = until
    } finally {
      advancing = false
    }
  }

  return {
    ...clockOn(host),
    advance,
    async jump(ms) {
      if (!Number.isFinite(ms) || ms < 0)
        throw new RangeError(`jump: ms must be a finite number of at least 0, got ${ms}`)
      if (advancing) throw new Error('jump: another advance is under way')
      now += ms
      await advance(0)
    },
    get pending() {
      return timers.size
    },
  }
}
