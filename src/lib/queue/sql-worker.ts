import type { Clock } from '../clock.js'
import { newId } from '../ids.js'
import { parseSchedule, type CronSchedule } from './cron.js'
import {
  assertOpen,
  backoffDelay,
  checkDefinition,
  checkDelay,
  checkJobName,
  checkKey,
  checkRetry,
  checkScheduleId,
  runAttempt,
  toJson,
  type CheckedRetry,
  type Job,
  type NamedQueue,
  type QueueDefinition,
  type QueueLog,
} from './queue.js'
import type { JobRow, NewJob, QueueStore, ScheduleRow } from './sql-store.js'

/** What one instance of the SQL queue shares with each queue it defines. */
export interface SqlWorkerContext {
  readonly store: QueueStore
  readonly clock: Clock
  /**
   * Node's clock, whatever `clock` is: polls and leases (is a process alive) run on it; a test clock moved
   * on a day would otherwise run a day of polls, and lapse the lease of a job running meanwhile.
   */
  readonly timers: Clock
  readonly log: QueueLog
  readonly instanceId: string
  readonly leaseMs: number
  readonly pollIntervalMs: number
  /** A lease lost this many times (its instance died while running the job) fails the job. */
  readonly maxStalls: number
  isClosed(): boolean
  /** Registers a run, so close() can wait for it, abort it and give its job back. */
  track(run: Promise<void>, jobId: string, controller: AbortController): void
}

/** One defined queue of the SQL queue: its worker (polling, wake-ups, runs) and its NamedQueue. */
export interface SqlWorker<J> {
  readonly queue: NamedQueue<J>
  /** Stops polling and waking; runs in progress go on. Resolves once a pass in progress has ended. */
  stop(): Promise<void>
}

const errorLength = 1000

/** What a pass does: claim due jobs; also fire due ticks (a timer woke it); also find the next due time (a poll). */
const Pass = { claim: 0, wake: 1, poll: 2 } as const
type Pass = (typeof Pass)[keyof typeof Pass]

/**
 * Defines queue `name` on the store and starts taking its jobs: a pass claims as many due jobs as
 * there is room for (leased to this instance), fires the schedules whose tick has come, and arms a
 * timer at the next due time it finds. Passes run one at a time; a poll every `pollIntervalMs` catches
 * what other instances added and leases that lapsed, and an add, a retry or a finished run in this
 * process starts one at once.
 */
export function startSqlWorker<J>(name: string, definition: QueueDefinition<J>, ctx: SqlWorkerContext): SqlWorker<J> {
  const { store, clock, log, instanceId, leaseMs } = ctx
  const concurrency = checkDefinition(name, definition as QueueDefinition<unknown>)
  const handlers = definition.handlers as object
  const crons = new Map<string, CronSchedule>()
  let active = 0
  // The last claim filled every free place: more may be waiting, so a finished run claims again.
  let maybeMore = true
  let pass: Promise<void> | null = null
  let queued: Pass | null = null
  let following: Promise<void> | null = null
  let wake: { at: number; cancel: () => void } | null = null
  let behind = false

  /** Starts a pass, or queues one (the widest asked for) after the pass under way. */
  function request(kind: Pass): Promise<void> {
    if (ctx.isClosed()) return pass ?? Promise.resolve()
    if (pass) {
      queued = Math.max(queued ?? Pass.claim, kind) as Pass
      // Answers once the queued pass has run too: a test clock's advance waits for the tick it fires.
      return (following ??= pass.then(() => pass ?? undefined))
    }
    pass = runPass(kind)
      .catch((err: unknown) => log.warn({ queue: name, err }, 'queue poll failed; it is tried again'))
      .finally(() => {
        pass = null
        following = null
        const next = queued
        queued = null
        if (next !== null) void request(next)
      })
    return pass
  }

  async function runPass(kind: Pass): Promise<void> {
    // A poll first asks what falls due (other instances' work, jobs from before a restart, lapsed leases)
    // and takes nothing when nothing has: an idle queue costs one read a second, no write. Otherwise this
    // process arms its timers from what it wrote itself.
    if (kind === Pass.poll) {
      behind = false
      const due = await store.nextDue(name)
      const now = clock.now()
      if (due.run !== null && due.run > now) wakeAt(due.run)
      const ripe = (due.run !== null && due.run <= now) || (due.lease !== null && due.lease < ctx.timers.now())
      if (!ripe) return
    }
    if (kind >= Pass.wake) await fireSchedules()
    // No room: the run that ends first claims again.
    if (active >= concurrency) maybeMore = true
    while (!ctx.isClosed() && active < concurrency) {
      const room = concurrency - active
      const now = clock.now()
      const leaseNow = ctx.timers.now()
      const rows = await store.claim(name, instanceId, room, now, leaseNow, leaseNow + leaseMs)
      if (ctx.isClosed()) {
        // Claimed while close() began: given back untouched, for the next start or another instance.
        await store.release(
          rows.map((r) => r.id),
          instanceId,
          clock.now(),
        )
        return
      }
      for (const row of rows) start(row)
      maybeMore = rows.length === room
      if (!maybeMore) break
    }
    if (kind === Pass.poll) {
      // What the poll found due is taken; the next time after it, armed.
      const due = await store.nextDue(name)
      if (due.run !== null && due.run > clock.now()) wakeAt(due.run)
    }
  }

  /**
   * Arms the one wake-up timer at `at` unless an earlier one is armed. A time given up (later than the
   * armed one, or replaced by an earlier one) marks the queue behind: the next wake-up asks the database.
   */
  function wakeAt(at: number): void {
    if (ctx.isClosed()) return
    if (wake && wake.at <= at) {
      behind ||= wake.at < at
      return
    }
    if (wake) {
      behind = true
      wake.cancel()
    }
    // The pass is what the timer answers: a test clock's advance waits for it (the job started, the next tick armed).
    const cancel = clock.after(at - clock.now(), () => {
      if (wake?.cancel === cancel) wake = null
      if (clock.now() < at) return wakeAt(at)
      return request(behind ? Pass.poll : Pass.wake)
    })
    wake = { at, cancel }
  }

  function start(row: JobRow): void {
    active++
    const controller = new AbortController()
    const job: Job = {
      id: row.id,
      queue: name,
      name: row.name,
      data: JSON.parse(row.data) as unknown,
      attempt: row.attempt,
      attempts: row.attempts,
      tick: row.tick === null ? null : Number(row.tick),
      signal: controller.signal,
    }
    const run = execute(row, job).catch((err: unknown) => {
      if (!ctx.isClosed())
        log.warn(
          { queue: name, id: row.id, err },
          'the outcome of a job could not be recorded; its lease will lapse and it runs again',
        )
    })
    ctx.track(run, row.id, controller)
    void run.finally(() => {
      active--
      if (maybeMore) void request(Pass.claim)
    })
  }

  async function execute(row: JobRow, job: Job): Promise<void> {
    if (row.stalls > ctx.maxStalls) {
      const error = new Error(
        `Job ${row.id} of queue "${name}" was running in an instance that stopped, ${row.stalls} times; it fails`,
      )
      log.error(
        { queue: name, job: job.name, id: job.id, stalls: row.stalls },
        'job lost its instance more than once; it fails',
      )
      await tellFailed(job, error)
      await store.fail(row.id, instanceId, error.message, clock.now())
      return
    }
    if (!Object.hasOwn(handlers, row.name)) {
      // A job another version of Plinth added: retrying here cannot help (as on Redis).
      log.error({ queue: name, job: job.name, id: job.id }, 'no handler for this job; it fails without retry')
      await store.fail(row.id, instanceId, `no handler for job "${row.name}"`, clock.now())
      return
    }
    try {
      await runAttempt(name, definition, job, log)
    } catch (err) {
      // Cut short by close(): not an attempt; close() gives the job back to wait.
      if (ctx.isClosed() && job.signal.aborted) return
      const message = (err instanceof Error ? err.message : String(err)).slice(0, errorLength)
      if (job.attempt >= job.attempts) {
        await store.fail(row.id, instanceId, message, clock.now())
        return
      }
      const backoff =
        row.backoff_type === null ? null : { type: row.backoff_type, delayMs: Number(row.backoff_ms ?? 0) }
      const runAt = clock.now() + backoffDelay(backoff, job.attempt)
      await store.retry(row.id, instanceId, runAt, message, clock.now())
      if (!ctx.isClosed()) wakeAt(runAt)
      return
    }
    await store.complete(row.id, instanceId)
  }

  async function tellFailed(job: Job, error: unknown): Promise<void> {
    try {
      await definition.onFailed?.(job as never, error)
    } catch (callbackErr) {
      log.error({ queue: name, job: job.name, id: job.id, err: callbackErr }, 'the failure callback of a job threw')
    }
  }

  /** Adds a job for each schedule whose tick has come, once across instances (the tick moves in the same transaction). */
  async function fireSchedules(): Promise<void> {
    const now = clock.now()
    for (const row of await store.dueSchedules(name, now)) {
      try {
        const tick = Number(row.next_at)
        // From the later of now and this tick: a late tick fires once, missed ones are skipped.
        const next = cronOf(row).next(Math.max(now, tick))
        await store.fire(name, row.id, tick, next, newJob(row.job, row.data, null, retryOf(row), tick, now), now)
        if (next !== null) wakeAt(next)
      } catch (err) {
        log.warn({ queue: name, schedule: row.id, err }, 'a schedule could not fire')
      }
    }
  }

  function cronOf(row: Pick<ScheduleRow, 'pattern' | 'timezone'>): CronSchedule {
    const key = `${row.timezone}\n${row.pattern}`
    let cron = crons.get(key)
    if (!cron) {
      if (crons.size >= 1000) crons.clear()
      cron = parseSchedule(row.pattern, row.timezone)
      crons.set(key, cron)
    }
    return cron
  }

  function newJob(
    jobName: string,
    data: string,
    key: string | null,
    retry: CheckedRetry,
    tick: number | null,
    runAt: number,
  ): NewJob {
    return {
      id: newId(),
      queue: name,
      name: jobName,
      data,
      key,
      attempts: retry.attempts,
      backoff_type: retry.backoff?.type ?? null,
      backoff_ms: retry.backoff?.delayMs ?? null,
      tick,
      run_at: runAt,
    }
  }

  const queue: NamedQueue<J> = {
    name,
    async add(jobName, data, options = {}) {
      assertOpen(ctx.isClosed())
      checkJobName(name, handlers, jobName)
      const retry = checkRetry(options)
      const delayMs = checkDelay(options.delayMs)
      const key = checkKey(options.key)
      const runAt = clock.now() + delayMs
      const id = await store.insert(newJob(jobName, JSON.stringify(toJson(data)), key, retry, null, runAt), clock.now())
      if (delayMs === 0) void request(Pass.claim)
      else wakeAt(runAt)
      return id
    },

    async schedule(id, options) {
      assertOpen(ctx.isClosed())
      checkScheduleId(id)
      checkJobName(name, handlers, options.job)
      const cron = parseSchedule(options.pattern, options.timezone)
      const retry = checkRetry(options)
      const data = JSON.stringify(toJson(options.data))
      let next: number | null = null
      await store.upsertSchedule(
        {
          queue: name,
          id,
          pattern: cron.pattern,
          timezone: cron.timezone,
          job: options.job,
          data,
          attempts: retry.attempts,
          backoff_type: retry.backoff?.type ?? null,
          backoff_ms: retry.backoff?.delayMs ?? null,
          updated_at: clock.now(),
        },
        // After the last tick it added, whatever this instance's clock says: that tick is never added twice.
        (lastTick) => (next = cron.next(Math.max(clock.now(), lastTick ?? -Infinity))),
      )
      if (next !== null) wakeAt(next)
    },

    async unschedule(id) {
      assertOpen(ctx.isClosed())
      return store.removeSchedule(name, id)
    },

    async schedules() {
      assertOpen(ctx.isClosed())
      const rows = await store.schedules(name)
      return rows.map((r) => ({
        id: r.id,
        pattern: r.pattern,
        timezone: r.timezone,
        job: r.job,
        next: r.next_at === null ? null : Number(r.next_at),
      }))
    },
  }

  const poll = ctx.timers.every(ctx.pollIntervalMs, () => request(Pass.poll), {
    onError: (err) => log.warn({ queue: name, err }, 'queue poll failed'),
  })
  // Jobs left from before (a restart) and ticks that came meanwhile.
  void request(Pass.poll)

  return {
    queue,
    async stop() {
      wake?.cancel()
      wake = null
      await poll.stop()
      await pass
    },
  }
}

function retryOf(row: Pick<ScheduleRow, 'attempts' | 'backoff_type' | 'backoff_ms'>): CheckedRetry {
  return {
    attempts: row.attempts,
    backoff: row.backoff_type === null ? null : { type: row.backoff_type, delayMs: Number(row.backoff_ms ?? 0) },
  }
}
