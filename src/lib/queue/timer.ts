/**
 * Runs `fn` once, `ms` milliseconds from now; the returned function cancels it. The queue's only source
 * of waiting (delays, backoff, cron ticks, the close bound), injected so tests drive time by hand.
 * Meant to become `Clock.sleep`/`Clock.every` once the Clock has them.
 */
export type Timer = (ms: number, fn: () => void) => () => void

// setTimeout holds at most 2^31-1 ms (about 24.8 days); longer waits (a yearly cron tick) are chained.
const maxTimeoutMs = 2 ** 31 - 1

/** The real timer: setTimeout, unref'd so a pending job never keeps the process alive. */
export const systemTimer: Timer = (ms, fn) => {
  let handle: NodeJS.Timeout
  const wait = (left: number) => {
    const step = Math.min(Math.max(0, left), maxTimeoutMs)
    handle = setTimeout(() => (left > step ? wait(left - step) : fn()), step)
    handle.unref()
  }
  wait(ms)
  return () => clearTimeout(handle)
}
