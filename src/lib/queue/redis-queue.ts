import { Queue, UnrecoverableError, Worker, type Job as BullJob, type JobsOptions, type RepeatStrategy } from 'bullmq'
import { Redis } from 'ioredis'
import { systemClock } from '../clock.js'
import { closeRedis, connectRedis } from '../redis/connect-redis.js'
import { parseSchedule, type CronSchedule } from './cron.js'
import {
  assertOpen,
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
  type QueueDefinition,
} from './queue.js'

/** `clock` is not used here: BullMQ reads `Date.now()` itself, in its scripts' arguments and its timers. */
export interface RedisQueueOptions extends JobQueueOptions {
  /** Told about Redis connection errors; defaults to ignoring them. */
  readonly onError?: (err: unknown) => void
}

// Finished jobs are kept a while for inspection, then dropped, so Redis does not grow without end.
const removeOnComplete = { age: 3600, count: 1000 }
const removeOnFail = { age: 7 * 24 * 3600, count: 10_000 }

/**
 * A JobQueue shared by every instance using the same Redis and prefix, on BullMQ. Keys live under
 * `${prefix}queue:<name>:…`. Each job runs in one instance (BullMQ's job lock); a schedule is a BullMQ job
 * scheduler whose next tick croner computes, so it fires once per tick across instances. Uses one
 * connection to add jobs, and two per defined queue to take them. Throws Error (no AppError code) when
 * Redis cannot be reached.
 */
export async function createRedisQueue(
  url: string,
  prefix: string,
  options: RedisQueueOptions = {},
): Promise<JobQueue> {
  const onError = options.onError ?? (() => {})
  const log = options.log ?? silentLog
  const clock = options.clock ?? systemClock
  const closeTimeoutMs = options.closeTimeoutMs ?? defaultCloseTimeoutMs
  const keyPrefix = `${prefix}queue`
  const producer = await connectRedis(url, 'queue', onError)
  // Workers copy this never-connected client for their own connections; BullMQ needs them to wait for
  // Redis without a retry limit (a blocking read must survive a reconnect).
  const consumerTemplate = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: null,
    connectionName: 'plinth-queue-worker',
  })
  const repeatStrategy = croneStrategy()
  const queues = new Map<string, { queue: Queue; worker: Worker }>()
  const running = new Set<AbortController>()
  let closed = false
  let closing: Promise<void> | null = null

  function jobOptions(retry: CheckedRetry): JobsOptions {
    return {
      attempts: retry.attempts,
      ...(retry.backoff && { backoff: { type: retry.backoff.type, delay: retry.backoff.delayMs } }),
      removeOnComplete,
      removeOnFail,
    }
  }

  async function defineQueue<J>(name: string, definition: QueueDefinition<J>): Promise<NamedQueue<J>> {
    const concurrency = checkDefinition(name, definition as QueueDefinition<unknown>)
    const handlers = definition.handlers as object

    const processJob = async (bullJob: BullJob): Promise<void> => {
      if (!Object.hasOwn(handlers, bullJob.name)) {
        // A job another version of Plinth added: retrying here cannot help.
        log.error({ queue: name, job: bullJob.name, id: bullJob.id }, 'no handler for this job; it fails without retry')
        throw new UnrecoverableError(`Queue "${name}" has no handler for job "${bullJob.name}"`)
      }
      const controller = new AbortController()
      running.add(controller)
      const job: Job = {
        id: String(bullJob.id),
        queue: name,
        name: bullJob.name,
        data: bullJob.data,
        attempt: bullJob.attemptsMade + 1,
        attempts: bullJob.opts.attempts ?? 1,
        tick: bullJob.repeatJobKey ? (bullJob.opts.prevMillis ?? null) : null,
        signal: controller.signal,
      }
      try {
        await runAttempt(name, definition, job, log)
      } finally {
        running.delete(controller)
      }
    }

    const queue = new Queue(name, { connection: producer, prefix: keyPrefix, settings: { repeatStrategy } })
    queue.on('error', onError)
    const worker = new Worker(name, processJob, {
      connection: consumerTemplate,
      prefix: keyPrefix,
      concurrency,
      settings: { repeatStrategy },
    })
    worker.on('error', onError)
    queues.set(name, { queue, worker })
    try {
      await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()])
    } catch (err) {
      queues.delete(name)
      await Promise.all([worker.close(true), queue.close()]).catch(() => {})
      throw err
    }

    return {
      name,
      async add(jobName, data, addOptions = {}) {
        assertOpen(closed)
        checkJobName(name, handlers, jobName)
        const retry = checkRetry(addOptions)
        const delay = checkDelay(addOptions.delayMs)
        const key = checkKey(addOptions.key)
        // BullMQ's deduplication (not jobId, which a kept finished job would hold for an hour): the key is
        // held until its job completes or fails for good, and a deduplicated add answers the holder's id.
        const added = await queue.add(jobName, toJson(data), {
          ...jobOptions(retry),
          delay,
          ...(key !== null && { deduplication: { id: key } }),
        })
        return String(added.id)
      },

      async schedule(id, scheduleOptions) {
        assertOpen(closed)
        checkScheduleId(id)
        checkJobName(name, handlers, scheduleOptions.job)
        const cron = parseSchedule(scheduleOptions.pattern, scheduleOptions.timezone)
        const opts: JobsOptions = jobOptions(checkRetry(scheduleOptions))
        // BullMQ computes the first tick from the later of its clock and `prevMillis`. Replacing a schedule,
        // start after the last tick it already produced: that tick may be running on an instance whose
        // clock is ahead of ours, and BullMQ would add it a second time.
        const produced = await producedTick(queue, id)
        if (produced !== null) opts.prevMillis = produced
        await queue.upsertJobScheduler(
          id,
          { pattern: cron.pattern, tz: cron.timezone },
          { name: scheduleOptions.job, data: toJson(scheduleOptions.data), opts },
        )
      },

      async unschedule(id) {
        assertOpen(closed)
        return queue.removeJobScheduler(id)
      },

      async schedules() {
        assertOpen(closed)
        const found = await queue.getJobSchedulers()
        return found.map((s) => ({
          id: s.key,
          pattern: s.pattern ?? '',
          timezone: s.tz ?? 'UTC',
          job: s.name,
          next: s.next ?? null,
        }))
      },
    }
  }

  /** Stops every worker; after the bound, aborts the jobs still running and drops the connections. */
  async function stopWorkers(): Promise<void> {
    const workers = [...queues.values()].map((q) => q.worker)
    const stopped = Promise.all(workers.map((w) => w.close()))
    let cancelBound = () => {}
    const bound = new Promise<'timeout'>((resolve) => {
      cancelBound = clock.after(closeTimeoutMs, () => resolve('timeout'))
    })
    const outcome = await Promise.race([stopped, bound])
    cancelBound()
    if (outcome !== 'timeout') return
    // Their locks lapse and another instance's stall check runs them again (docs/queue.md).
    log.warn(
      { running: running.size, closeTimeoutMs },
      'jobs still running when the queue closed; their signals are aborted',
    )
    for (const controller of running) controller.abort()
    await Promise.all(workers.map((w) => w.disconnect().catch(onError)))
  }

  return {
    shared: true,
    async define(name, definition) {
      assertOpen(closed)
      checkQueueName(name)
      if (queues.has(name)) throw new Error(`Queue "${name}" is already defined`)
      return defineQueue(name, definition)
    },

    async depth() {
      assertOpen(closed)
      return Promise.all(
        [...queues].map(async ([name, { queue }]) => {
          const [counts, schedules] = await Promise.all([
            queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active'),
            queue.getJobSchedulersCount(),
          ])
          const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0)
          // BullMQ keeps each schedule's next tick as a delayed job; the other queues count no job before its tick.
          const delayed = Math.max(0, (counts.delayed ?? 0) - schedules)
          return { queue: name, waiting, delayed, active: counts.active ?? 0 }
        }),
      )
    },

    close() {
      closing ??= (async () => {
        closed = true
        await stopWorkers()
        await Promise.all([...queues.values()].map((q) => q.queue.close().catch(onError)))
        await closeRedis(producer)
        consumerTemplate.disconnect()
      })()
      return closing
    },
  }
}

/** The tick before the pending one of schedule `id`: the last one it added (run, running or waiting); null without one. */
async function producedTick(queue: Queue, id: string): Promise<number | null> {
  const existing = await queue.getJobScheduler(id)
  if (!existing?.pattern || typeof existing.next !== 'number') return null
  try {
    return parseSchedule(existing.pattern, existing.tz ?? undefined).previous(existing.next)
  } catch {
    return null // a pattern stored by something else: BullMQ replaces it from the current time
  }
}

/** BullMQ's repeat strategy with croner's arithmetic, so Redis schedules fire exactly as memory ones do. */
function croneStrategy(): RepeatStrategy {
  const parsed = new Map<string, CronSchedule>()
  return (millis, repeat) => {
    const key = `${repeat.tz ?? ''}\n${repeat.pattern ?? ''}`
    let cron = parsed.get(key)
    if (!cron) {
      if (parsed.size >= 1000) parsed.clear()
      cron = parseSchedule(repeat.pattern ?? '', repeat.tz ?? undefined)
      parsed.set(key, cron)
    }
    return cron.next(millis) ?? undefined
  }
}
