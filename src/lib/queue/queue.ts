import { AppError } from '../errors.js'
import type { Clock } from '../clock.js'

/**
 * One run of a job, as its handler sees it. `data` went through JSON (as it does on Redis): a Date
 * arrives as its ISO string, `undefined` properties are gone.
 */
export interface Job<T = unknown, N extends string = string> {
  readonly id: string
  readonly queue: string
  readonly name: N
  readonly data: T
  /** 1 on the first run, 2 on the first retry, … */
  readonly attempt: number
  /** How many runs the job gets in all before it fails for good. */
  readonly attempts: number
  /** For a job started by a schedule: the tick it fires for (ms since the epoch); otherwise null. */
  readonly tick: number | null
  /** Aborted when close() stops waiting for this run; a long handler should give up then. */
  readonly signal: AbortSignal
}

/** A job of any name of the map `J` (job name → data), typed by its name. */
export type JobOf<J> = { [K in JobName<J>]: Job<J[K], K> }[JobName<J>]
export type JobName<J> = keyof J & string

export type JobHandler<T, N extends string = string> = (job: Job<T, N>) => Promise<void>

export interface Backoff {
  /** `fixed`: `delayMs` before every retry; `exponential`: `delayMs`, then twice that, four times, … */
  readonly type: 'fixed' | 'exponential'
  readonly delayMs: number
}

export interface RetryOptions {
  /** Runs in all, the first included (1 to 100; 1 by default: no retry). */
  readonly attempts?: number
  /** Wait before each retry; none by default (retried at once). */
  readonly backoff?: Backoff
}

export interface AddOptions extends RetryOptions {
  /** Runs the job no sooner than this many milliseconds from now. */
  readonly delayMs?: number
  /**
   * Dedupes the job (1-200 letters, digits or _ . : @ -): while a job of this queue added with the same
   * key is waiting, delayed, running or between retries, `add` adds nothing and answers that job's id.
   * Once it completed or failed for good, the key is free again.
   */
  readonly key?: string
}

export interface ScheduleOptions<J, K extends JobName<J>> extends RetryOptions {
  /** A cron pattern, checked by `parseSchedule` (5 or 6 fields, croner's semantics). */
  readonly pattern: string
  /** An IANA time zone name the pattern is read in; UTC by default. */
  readonly timezone?: string
  /** The job each tick adds, with this data. */
  readonly job: K
  readonly data: J[K]
}

export interface ScheduleInfo {
  readonly id: string
  readonly pattern: string
  readonly timezone: string
  readonly job: string
  /** The next tick (ms since the epoch), or null when none is pending. */
  readonly next: number | null
}

export interface QueueDefinition<J> {
  /** One handler per job name; a handler that throws (or rejects) fails that run. */
  readonly handlers: { readonly [K in JobName<J>]: JobHandler<J[K], K> }
  /** Jobs of this queue run at once in this instance (1 to 1000; 1 by default). */
  readonly concurrency?: number
  /** Told once per job whose last attempt failed, after the failure was logged. */
  readonly onFailed?: (job: JobOf<J>, error: unknown) => void | Promise<void>
}

/** A named queue: its jobs go to the handlers it was defined with, in whichever instance takes them. */
export interface NamedQueue<J> {
  readonly name: string
  /**
   * Adds one job and returns its id. Each job runs once (once per attempt), in one instance.
   * Throws AppError validation_error for bad options or data that is not JSON, Error once closed.
   */
  add<K extends JobName<J>>(name: K, data: J[K], options?: AddOptions): Promise<string>
  /**
   * Creates or replaces the schedule `id`: at each tick of the pattern one job is added, once across
   * every instance. A tick missed while nothing ran is not made up. Throws AppError validation_error
   * for a bad pattern or time zone (see `parseSchedule`), Error once closed.
   */
  schedule<K extends JobName<J>>(id: string, options: ScheduleOptions<J, K>): Promise<void>
  /** Removes the schedule `id`; false when there was none. Jobs it already added still run. Throws Error once closed. */
  unschedule(id: string): Promise<boolean>
  /** Every schedule of this queue, including those other instances made (Redis). Throws Error once closed. */
  schedules(): Promise<ScheduleInfo[]>
}

/**
 * Background jobs: named queues with typed handlers, delays, retries with backoff, keys and cron schedules.
 * In process (memory), durable in the system database (SQL), or shared by every instance through Redis (BullMQ).
 */
export interface JobQueue {
  /**
   * True when jobs are shared with other instances (Redis, or the SQL queue of a deployment that runs
   * several on one database); false when this process is alone (memory, the embedded SQL queue).
   */
  readonly shared: boolean
  /**
   * Defines the queue `name` in this instance and starts taking its jobs. Every instance that should run
   * them defines it with the same handlers. Throws Error for a bad or already defined name, or once closed.
   */
  define<J>(name: string, definition: QueueDefinition<J>): Promise<NamedQueue<J>>
  /**
   * Jobs not yet done of every queue this instance defined, by state: `waiting` (due now), `delayed` (a
   * delay, a backoff before a retry) and `active` (running, in any instance when the queue is shared).
   * Read for /metrics; a queue with none reports zeros.
   */
  depth(): Promise<QueueDepth[]>
  /**
   * Stops taking jobs, waits for running ones up to the close bound (their signals are aborted when it
   * passes), and releases connections. Idempotent.
   */
  close(): Promise<void>
}

export interface QueueDepth {
  readonly queue: string
  readonly waiting: number
  readonly delayed: number
  readonly active: number
}

export interface JobQueueOptions {
  /** Where retries (warn) and failures (error) are logged; nothing is logged by default. */
  readonly log?: QueueLog
  /** Time and waiting (delays, backoff, ticks, the close bound): `now` and `after`. */
  readonly clock?: Clock
  /** How long close() waits for running jobs; 10 s by default. */
  readonly closeTimeoutMs?: number
}

export interface QueueLog {
  warn(fields: object, message: string): void
  error(fields: object, message: string): void
}

export const silentLog: QueueLog = { warn: () => {}, error: () => {} }
export const defaultCloseTimeoutMs = 10_000

const namePattern = /^[A-Za-z0-9][\w-]{0,63}$/
const idPattern = /^[\w.:@-]{1,200}$/

/** Throws Error (a programming mistake, no AppError code) for a queue name Redis keys cannot carry. */
export function checkQueueName(name: string): void {
  if (typeof name !== 'string' || !namePattern.test(name)) {
    throw new Error(`Invalid queue name ${JSON.stringify(name)}: 1-64 letters, digits, _ or -`)
  }
}

/** Throws Error unless `definition` has a handler function for every name and a sane concurrency. */
export function checkDefinition(queue: string, definition: QueueDefinition<unknown>): number {
  const handlers = Object.entries(definition.handlers ?? {})
  if (handlers.length === 0) throw new Error(`Queue "${queue}" needs at least one handler`)
  for (const [name, handler] of handlers) {
    if (typeof handler !== 'function') throw new Error(`Queue "${queue}": the handler of "${name}" is not a function`)
  }
  const concurrency = definition.concurrency ?? 1
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new Error(`Queue "${queue}": concurrency must be an integer from 1 to 1000`)
  }
  return concurrency
}

/** Throws Error when the queue has no handler for `name` (a name outside its job map). */
export function checkJobName(queue: string, handlers: object, name: string): void {
  if (typeof name !== 'string' || !Object.hasOwn(handlers, name))
    throw new Error(`Queue "${queue}" has no handler for job "${String(name)}"`)
}

/** Throws AppError validation_error for a schedule id that is empty, too long or has odd characters. */
export function checkScheduleId(id: string): void {
  if (typeof id !== 'string' || !idPattern.test(id)) {
    throw new AppError(
      'validation_error',
      `Invalid schedule id ${JSON.stringify(id)}: 1-200 letters, digits or _ . : @ -`,
      { field: 'id' },
    )
  }
}

/** Validates a job key (absent: null). Throws AppError validation_error for one that is empty, too long or has odd characters. */
export function checkKey(key: string | undefined): string | null {
  if (key === undefined) return null
  if (typeof key !== 'string' || !idPattern.test(key)) {
    throw new AppError(
      'validation_error',
      `Invalid job key ${JSON.stringify(key)}: 1-200 letters, digits or _ . : @ -`,
      { field: 'key' },
    )
  }
  return key
}

export interface CheckedRetry {
  readonly attempts: number
  readonly backoff: Backoff | null
}

/** Validates retry options at run time (they may come from a flow's settings). Throws AppError validation_error. */
export function checkRetry(options: RetryOptions = {}): CheckedRetry {
  const attempts = options.attempts ?? 1
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 100)
    throw invalid('attempts', 'attempts must be an integer from 1 to 100')
  const backoff = options.backoff ?? null
  if (backoff !== null) {
    if (backoff.type !== 'fixed' && backoff.type !== 'exponential')
      throw invalid('backoff.type', 'backoff type must be "fixed" or "exponential"')
    checkMs('backoff.delayMs', backoff.delayMs)
  }
  return { attempts, backoff: backoff && { type: backoff.type, delayMs: backoff.delayMs } }
}

/** Validates a delay in milliseconds (0 to one year). Throws AppError validation_error. */
export function checkDelay(delayMs: number | undefined): number {
  if (delayMs === undefined) return 0
  checkMs('delayMs', delayMs)
  return delayMs
}

/** The wait before the retry that follows failed attempt number `failed` (1 = the first run). */
export function backoffDelay(backoff: Backoff | null, failed: number): number {
  if (!backoff) return 0
  return backoff.type === 'fixed' ? backoff.delayMs : Math.round(2 ** (failed - 1) * backoff.delayMs)
}

/** A JSON copy of job data, so both implementations hand handlers the same thing. Throws AppError validation_error. */
export function toJson<T>(data: T): T {
  let text: string | undefined
  try {
    text = JSON.stringify(data)
  } catch (err) {
    throw invalid('data', `Job data is not JSON: ${err instanceof Error ? err.message : String(err)}`)
  }
  if (text === undefined) throw invalid('data', 'Job data is not JSON: undefined, a function or a symbol')
  return JSON.parse(text) as T
}

/**
 * Runs one attempt through its handler. A failure is logged (warn when a retry follows, error on the last
 * attempt) and rethrown; on the last attempt `onFailed` is told first. The same path on memory and Redis.
 */
export async function runAttempt(
  queue: string,
  definition: QueueDefinition<any>,
  job: Job,
  log: QueueLog,
): Promise<void> {
  try {
    const handler = definition.handlers[job.name] as JobHandler<unknown> | undefined
    if (!handler) throw new Error(`Queue "${queue}" has no handler for job "${job.name}"`)
    await handler(job)
  } catch (err) {
    const fields = { queue, job: job.name, id: job.id, attempt: job.attempt, attempts: job.attempts, err }
    if (job.attempt < job.attempts) {
      log.warn(fields, 'job failed; it will be retried')
      throw err
    }
    log.error(fields, 'job failed on its last attempt')
    try {
      await definition.onFailed?.(job, err)
    } catch (callbackErr) {
      log.error({ queue, job: job.name, id: job.id, err: callbackErr }, 'the failure callback of a job threw')
    }
    throw err
  }
}

/** Throws a plain Error (a programming mistake, no AppError code) once the queue was closed. */
export function assertOpen(closed: boolean): void {
  if (closed) throw new Error('JobQueue is closed')
}

function checkMs(field: string, ms: number): void {
  // One year: far beyond any sensible wait, and safe for every timer.
  if (!Number.isInteger(ms) || ms < 0 || ms > 365 * 24 * 3_600_000)
    throw invalid(field, `${field} must be an integer number of milliseconds from 0 to one year`)
}

function invalid(field: string, message: string): AppError {
  return new AppError('validation_error', message, { field })
}
