import { readFileSync, readlinkSync } from 'node:fs'
import { epochMs } from './types.js'

/** A clock in ms: a thread's CPU time, or the wall clock where that cannot be read. */
export type Clock = () => number

/** The CPU time of a thread from Linux's schedstat (ns run on a CPU; updated at least every scheduler tick). */
function schedstatClock(path: string): Clock | null {
  const read = () => Number(readFileSync(path, 'latin1').split(' ', 1)[0]) / 1e6
  try {
    return Number.isFinite(read()) ? read : null
  } catch {
    return null
  }
}

/** This thread's Linux thread id, null elsewhere: a worker tells the parent, which then reads the worker's CPU time (both through the same path). */
export function ownThreadId(): number | null {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isInteger(tid) && schedstatClock(`/proc/self/task/${tid}/schedstat`) ? tid : null
  } catch {
    return null
  }
}

/** The clock a run's CPU time is counted in, seen from any thread of the process: that thread's CPU time (Linux), or the wall clock. */
export function threadClock(tid: number | null): Clock {
  return (tid !== null && schedstatClock(`/proc/self/task/${tid}/schedstat`)) || epochMs
}

/**
 * The script's time in the interpreter, counted on the thread's CPU clock (the wall clock where there is
 * none, an upper bound of it). Every stretch inside is told to `publish` (the watchdog's view, watchdog.ts).
 * `over` is asked by the interrupt handler thousands of times a second: the wall clock, which runs at
 * least as fast as the thread's CPU time, answers it while the budget is far, and the CPU clock is read
 * at most once a millisecond once it is near.
 */
export class InterpreterMeter {
  private used = 0
  private sliceStart: number | null = null
  private lastRead = { wall: 0, used: 0 }

  constructor(
    private readonly clock: Clock,
    private readonly publish?: (usedMs: number, sliceStart: number | null) => void,
  ) {}

  get inside(): boolean {
    return this.sliceStart !== null
  }

  /** The time used so far, the current stretch included. */
  usedMs(): number {
    return this.sliceStart === null ? this.used : this.used + (this.clock() - this.sliceStart)
  }

  enter(): void {
    this.sliceStart = this.clock()
    this.lastRead = { wall: performance.now(), used: this.used }
    this.publish?.(this.used, this.sliceStart)
  }

  leave(): void {
    if (this.sliceStart === null) return
    this.used += this.clock() - this.sliceStart
    this.sliceStart = null
    this.publish?.(this.used, null)
  }

  /** True once the time used passes `limitMs`. */
  over(limitMs: number): boolean {
    if (this.sliceStart === null) return this.used > limitMs
    const wall = performance.now()
    // Upper bound since the last read: CPU time cannot grow faster than the wall clock.
    if (this.lastRead.used + (wall - this.lastRead.wall) <= limitMs) return false
    // The last read was under the limit (or this would have stopped already): read again only a millisecond later.
    if (wall - this.lastRead.wall < 1) return false
    this.lastRead = { wall, used: this.usedMs() }
    return this.lastRead.used > limitMs
  }
}
