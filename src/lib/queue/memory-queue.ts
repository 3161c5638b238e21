import { systemClock } from '../clock.js'
import { parseSchedule, type CronSchedule } from './cron.js'
import {
  assertOpen,
  backoffDelay,
  checkDefinition,
  checkDelay,
  checkJobName,
  checkKey,
  checkQueueName,
  checkRetry,
  checkScheduleId,
  defaultCloseTimeoutMs,
  runAttempt,
  silentLog,
  toJson,
  type CheckedRetry,
  type Job,
  type JobQueue,
  type JobQueueOptions,
  type NamedQueue,
  type QueueDepth,
  type QueueDefinition,
  type ScheduleInfo,
} from './queue.js'

interface Pending {
  readonly id: string
  readonly name: string
  readonly data: unknown
  readonly retry: CheckedRetry
  readonly tick: number | null
  readonly key: string | null
  /** Attempts already made. */
  failed: number
}

interface Scheduled {
  readonly cron: CronSchedule
  readonly job: string
  readonly data: unknown
  readonly retry: CheckedRetry
  next: number | null
  cancel(): void
}

/**
 * A JobQueue for the embedded mode: one process, jobs in memory. Nothing survives a restart (delayed
 * jobs, retries in waiting, schedules): work that must is kept in its owner's table and re-enqueued, and
 * schedules are declared again at start (docs/decisions/018-queue.md). Time and waiting come from the
 * Clock (`now`, `after`), so a test's manual clock moves every delay and tick.
 */
export function createMemoryQueue(options: JobQueueOptions = {}): JobQueue {
  const clock = options.clock ?? systemClock
  const log = options.log ?? silentLog
  const closeTimeoutMs = options.closeTimeoutMs ?? defaultCloseTimeoutMs
  const cancels = new Set<() => void>()
  const running = new Map<Promise<void>, AbortController>()
  const depths = new Map<string, () => QueueDepth>()
  let closed = false
  let closing: Promise<void> | null = null

  /** A timer the queue forgets once it fired and cancels on close. */
  function after(ms: number, fn: () => void): () => void {
    const cancel = clock.after(ms, () => {
      cancels.delete(cancel)
      if (!closed) fn()
    })
    cancels.add(cancel)
    return () => {
      cancels.delete(cancel)
      cancel()
    }
  }

  function defineQueue<J>(name: string, definition: QueueDefinition<J>): NamedQueue<J> {
    const concurrency = checkDefinition(name, definition as QueueDefinition<unknown>)
    const waiting: Pending[] = []
    const schedules = new Map<string, Scheduled>()
    // Keys of unfinished jobs (waiting, delayed, running, between retries).
    const keyed = new Map<string, Pending>()
    let active = 0
    let delayed = 0
    let sequence = 0
    depths.set(name, () => ({ queue: name, waiting: waiting.length, delayed, active }))

    /** Enqueues after `ms`, counted as delayed meanwhile (a timer close() cancels is never enqueued). */
    function enqueueAfter(ms: number, job: Pending): void {
      delayed++
      after(ms, () => {
        delayed--
        enqueue(job)
      })
    }

    function enqueue(job: Pending): void {
      waiting.push(job)
      // Never inside the caller's stack: a handler runs on a later turn, as it would on Redis.
      setImmediate(pump)
    }

    function pump(): void {
      while (!closed && active < concurrency && waiting.length > 0) start(waiting.shift()!)
    }

    function start(pending: Pending): void {
      active++
      const controller = new AbortController()
      const job: Job = {
        id: pending.id,
        queue: name,
        name: pending.name,
        data: pending.data,
        attempt: pending.failed + 1,
        attempts: pending.retry.attempts,
        tick: pending.tick,
        signal: controller.signal,
      }
      const finish = () => {
        if (pending.key !== null && keyed.get(pending.key) === pending) keyed.delete(pending.key)
      }
      const run = runAttempt(name, definition, job, log).then(finish, () => {
        pending.failed++
        if (closed || pending.failed >= pending.retry.attempts) return finish()
        const wait = backoffDelay(pending.retry.backoff, pending.failed)
        if (wait === 0) enqueue(pending)
        else enqueueAfter(wait, pending)
      })
      running.set(run, controller)
      void run.finally(() => {
        running.delete(run)
        active--
        pump()
      })
    }

    function arm(id: string, entry: Scheduled, from: number): void {
      entry.next = entry.cron.next(from)
      if (entry.next === null) return
      const tick = entry.next
      const cancel = after(Math.max(0, tick - clock.now()), () => {
        if (schedules.get(id) !== entry) return
        enqueue({
          id: `repeat:${id}:${tick}`,
          name: entry.job,
          data: entry.data,
          retry: entry.retry,
          tick,
          key: null,
          failed: 0,
        })
        // From the later of now and this tick: a late timer fires its tick once, missed ticks are skipped.
        arm(id, entry, Math.max(clock.now(), tick))
      })
      entry.cancel = cancel
    }

    return {
      name,
      async add(jobName, data, addOptions = {}) {
        assertOpen(closed)
        checkJobName(name, definition.handlers, jobName)
        const retry = checkRetry(addOptions)
        const delayMs = checkDelay(addOptions.delayMs)
        const key = checkKey(addOptions.key)
        const holder = key === null ? undefined : keyed.get(key)
        const json = toJson(data)
        if (holder) return holder.id
        const pending: Pending = {
          id: String(++sequence),
          name: jobName,
          data: json,
          retry,
          tick: null,
          key,
          failed: 0,
        }
        if (key !== null) keyed.set(key, pending)
        if (delayMs > 0) enqueueAfter(delayMs, pending)
        else enqueue(pending)
        return pending.id
      },

      async schedule(id, scheduleOptions) {
        assertOpen(closed)
        checkScheduleId(id)
        checkJobName(name, definition.handlers, scheduleOptions.job)
        const cron = parseSchedule(scheduleOptions.pattern, scheduleOptions.timezone)
        const entry: Scheduled = {
          cron,
          job: scheduleOptions.job,
          data: toJson(scheduleOptions.data),
          retry: checkRetry(scheduleOptions),
          next: null,
          cancel: () => {},
        }
        schedules.get(id)?.cancel()
        schedules.set(id, entry)
        arm(id, entry, clock.now())
      },

      async unschedule(id) {
        assertOpen(closed)
        const entry = schedules.get(id)
        if (!entry) return false
        entry.cancel()
        schedules.delete(id)
        return true
      },

      async schedules(): Promise<ScheduleInfo[]> {
        assertOpen(closed)
        return [...schedules].map(([id, entry]) => ({
          id,
          pattern: entry.cron.pattern,
          timezone: entry.cron.timezone,
          job: entry.job,
          next: entry.next,
        }))
      },
    }
  }

  return {
    shared: false,
    async define(name, definition) {
      assertOpen(closed)
      checkQueueName(name)
      if (depths.has(name)) throw new Error(`Queue "${name}" is already defined`)
      return defineQueue(name, definition)
    },

    async depth() {
      return [...depths.values()].map((read) => read())
    },

    close() {
      closing ??= (async () => {
        closed = true
        for (const cancel of [...cancels]) cancel()
        cancels.clear()
        if (running.size === 0) return
        let cancelBound = () => {}
        const bound = new Promise<'timeout'>((resolve) => {
          cancelBound = clock.after(closeTimeoutMs, () => resolve('timeout'))
        })
        const outcome = await Promise.race([Promise.all(running.keys()), bound])
        cancelBound()
        if (outcome === 'timeout') {
          log.warn(
            { running: running.size, closeTimeoutMs },
            'jobs still running when the queue closed; their signals are aborted',
          )
          for (const controller of running.values()) controller.abort()
        }
      })()
      return closing
    },
  }
}
