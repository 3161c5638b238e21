import type { Clock } from './cpu-time.js'

/**
 * What a run shares with its worker (one SharedArrayBuffer): the abort flag the interrupt handler reads,
 * and the meter the worker writes as it enters and leaves the interpreter: the time used before the
 * current stretch and when that stretch began (µs on the run's clock, the worker thread's CPU time where
 * it can be read; 0 while outside). Read from the parent with the same clock, they give the run's time in
 * the interpreter even while the worker's thread is stuck in one builtin call.
 */
export interface RunShare {
  readonly buffer: SharedArrayBuffer
  readonly flag: Int32Array
  readonly meter: BigInt64Array
}

export function newRunShare(): RunShare {
  return openRunShare(new SharedArrayBuffer(24))
}

/** The views over a share received from the other thread. */
export function openRunShare(buffer: SharedArrayBuffer): RunShare {
  return { buffer, flag: new Int32Array(buffer, 0, 1), meter: new BigInt64Array(buffer, 8, 2) }
}

/** The worker's side (runInSandbox's `onSlice`). Leaving clears the start before adding the time, so a reader never counts a stretch twice. */
export function writeMeter(meter: BigInt64Array, usedMs: number, sliceStart: number | null): void {
  const used = BigInt(Math.round(usedMs * 1000))
  if (sliceStart === null) {
    Atomics.store(meter, 1, 0n)
    Atomics.store(meter, 0, used)
  } else {
    Atomics.store(meter, 0, used)
    Atomics.store(meter, 1, BigInt(Math.round(sliceStart * 1000)))
  }
}

/** The run's time in the interpreter so far, as the parent sees it, and whether it is in there now. */
export function readMeter(meter: BigInt64Array, clock: Clock): { usedMs: number; inside: boolean } {
  const used = Number(Atomics.load(meter, 0)) / 1000
  const start = Number(Atomics.load(meter, 1)) / 1000
  return start > 0 ? { usedMs: used + Math.max(0, clock() - start), inside: true } : { usedMs: used, inside: false }
}

/** Past the CPU bound, how long the interrupt handler gets to stop the script itself (keeping its worker) before the watchdog ends it. */
export function watchdogGraceMs(cpuMs: number): number {
  return Math.max(2, cpuMs * 0.03)
}
/** How often the meter is read while the script is outside the interpreter (awaiting a fetch), to see it go back in. */
const outsidePollMs = 10

/**
 * Calls `onOver(usedMs)` once the run's time in the interpreter passes `cpuMs` plus the grace. The timer
 * is set for the earliest moment the budget can run out (CPU time grows at most as fast as the wall
 * clock), and set again while it has not, so the bound holds however long one builtin call lasts, within
 * the parent's timer delay. Returns the function that stops watching.
 */
export function watchCpu(
  meter: BigInt64Array,
  clock: Clock,
  cpuMs: number,
  onOver: (usedMs: number) => void,
): () => void {
  const over = cpuMs + watchdogGraceMs(cpuMs)
  let timer: NodeJS.Timeout | undefined
  const check = () => {
    const { usedMs, inside } = readMeter(meter, clock)
    if (usedMs >= over) return onOver(usedMs)
    const left = Math.max(1, over - usedMs)
    timer = setTimeout(check, inside ? left : Math.min(outsidePollMs, left))
  }
  check()
  return () => clearTimeout(timer)
}
