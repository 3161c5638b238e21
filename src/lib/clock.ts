/**
 * Time, injected so tests can hold it still and move it on (`createManualClock`): what the code reads
 * (`now`), waits for (`sleep`) and repeats (`every`) all go through it. Only network-level timeouts of
 * sockets and the log's flush stay on Node's timers.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /** Whole Unix seconds, the unit of every timestamp the API returns. */
  seconds(): number
  /**
   * Resolves after `ms` (at once for 0 or less; Infinity waits for the signal). Rejects with the signal's
   * reason when it aborts first, or is aborted already; RangeError for NaN. Keeps the process alive, as a
   * pending timer does.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
  /**
   * Runs `run` every `ms`: first `ms` from now, then `ms` after each run has ended, so runs never overlap.
   * A run that throws or rejects goes to `onError` and the schedule goes on. The timer never keeps the
   * process alive. Throws RangeError unless `ms` is a finite number of at least 1.
   */
  every(ms: number, run: () => unknown, options?: EveryOptions): Ticker
  /**
   * Calls `fire` once, `ms` from now (at once for 0 or less), unless the returned function cancels it
   * first. The timer never keeps the process alive: for work that waits in the background (a delayed job,
   * a cron tick), where `sleep` is for a caller awaiting it.
   */
  after(ms: number, fire: () => void): () => void
}

export interface EveryOptions {
  /** Told what a run threw (default: a process warning); the schedule goes on either way. */
  readonly onError?: (err: unknown) => void
}

/** What `every` returns. */
export interface Ticker {
  /** No run starts after this; resolves once a run in progress has ended. */
  stop(): Promise<void>
}

/** Reading the time only: what caches and limiters need, and all a test must fake for them. */
export type TimeSource = Pick<Clock, 'now' | 'seconds'>

/**
 * Where a clock's time and timers come from: Node's, or a test's (clock-manual.ts). `fire`'s result is
 * awaited by a manual host, so advancing time waits for the runs it started.
 */
export interface TimerHost {
  now(): number
  /** Calls `fire` once after `ms`; returns the cancel. `keepAlive` false: the timer holds no process open. */
  schedule(ms: number, fire: () => unknown, keepAlive: boolean): () => void
}

/** A Clock on a timer host: sleep and every are written once, for Node's timers and the test clock alike. */
export function clockOn(host: TimerHost): Clock {
  return {
    now: () => host.now(),
    seconds: () => Math.floor(host.now() / 1000),

    sleep(ms, signal) {
      if (Number.isNaN(ms)) return Promise.reject(new RangeError('sleep: ms must be a number, got NaN'))
      if (signal?.aborted) return Promise.reject(signal.reason)
      if (ms <= 0) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          cancel()
          reject(signal!.reason)
        }
        const cancel = host.schedule(
          ms,
          () => {
            signal?.removeEventListener('abort', onAbort)
            resolve()
          },
          true,
        )
        signal?.addEventListener('abort', onAbort, { once: true })
      })
    },

    after(ms, fire) {
      return host.schedule(Math.max(0, ms), fire, false)
    },

    every(ms, run, options = {}) {
      if (!Number.isFinite(ms) || ms < 1)
        throw new RangeError(`every: ms must be a finite number of at least 1, got ${ms}`)
      const onError = options.onError ?? warn
      let stopped = false
      let running: Promise<void> | null = null
      const tick = (): Promise<void> => {
        running = runOnce(run, onError).then(() => {
          running = null
          if (!stopped) cancel = host.schedule(ms, tick, false)
        })
        return running
      }
      let cancel = host.schedule(ms, tick, false)
      return {
        async stop() {
          stopped = true
          cancel()
          await running
        },
      }
    },
  }
}

/** What `busyTicker` returns. */
export interface BusyTicker extends Ticker {
  /** Work arrived: a run is due `ms` from now, unless one is due or running already. */
  wake(): void
}

/**
 * `every` for work that comes and goes (leases of active runs, held step logs, parked runs): runs every `ms`
 * while `busy()` says there is work, and from a run that finds none holds no timer at all until `wake`. An
 * idle server wakes for nothing, and a test's manual clock moving hours on fires nothing for it.
 */
export function busyTicker(
  clock: Pick<Clock, 'after'>,
  ms: number,
  run: () => unknown,
  busy: () => boolean,
  options: EveryOptions = {},
): BusyTicker {
  if (!Number.isFinite(ms) || ms < 1)
    throw new RangeError(`busyTicker: ms must be a finite number of at least 1, got ${ms}`)
  const onError = options.onError ?? warn
  let stopped = false
  let cancel: (() => void) | null = null
  let running: Promise<void> | null = null
  const arm = (): void => {
    if (!stopped && cancel === null && running === null) cancel = clock.after(ms, tick)
  }
  const tick = (): Promise<void> => {
    cancel = null
    running = runOnce(run, onError).then(() => {
      running = null
      if (busy()) arm()
    })
    return running
  }
  return {
    wake: arm,
    async stop() {
      stopped = true
      cancel?.()
      cancel = null
      await running
    },
  }
}

async function runOnce(run: () => unknown, onError: (err: unknown) => void): Promise<void> {
  try {
    await run()
  } catch (err) {
    try {
      onError(err)
    } catch {
      // A failing reporter must not end the schedule.
    }
  }
}

function warn(err: unknown): void {
  process.emitWarning(err instanceof Error ? err : new Error(String(err)))
}

// Node's timers take at most 2^31 - 1 ms (about 24.8 days); a longer delay would fire after 1 ms.
const maxTimerMs = 2_147_483_647

const nodeTimers: TimerHost = {
  now: () => Date.now(),
  schedule(ms, fire, keepAlive) {
    let timer: NodeJS.Timeout
    const arm = (left: number) => {
      timer = setTimeout(() => (left > maxTimerMs ? arm(left - maxTimerMs) : void fire()), Math.min(left, maxTimerMs))
      if (!keepAlive) timer.unref()
    }
    arm(ms)
    return () => clearTimeout(timer)
  },
}

/** The real clock: Date.now and Node's timers. */
export const systemClock: Clock = clockOn(nodeTimers)
