import { systemClock } from '../clock.js'
import type { DbHandle } from '../db/index.js'
import { newId } from '../ids.js'
import {
  assertOpen,
  checkQueueName,
  defaultCloseTimeoutMs,
  silentLog,
  type JobQueue,
  type JobQueueOptions,
} from './queue.js'
import { createQueueStore } from './sql-store.js'
import { startSqlWorker, type SqlWorker } from './sql-worker.js'

export interface SqlQueueOptions extends JobQueueOptions {
  /**
   * Whether other instances take jobs from the same database (reported as `shared`). False (the default,
   * the embedded mode): this instance is alone, so at open every job another process was running is an
   * earlier process's and is taken back at once instead of when its lease lapses.
   */
  readonly shared?: boolean
  /** How often each queue looks for jobs other instances added and leases that lapsed; 1 s by default. */
  readonly pollIntervalMs?: number
  /** How long a running job is leased to this instance (renewed every third of it); 30 s by default. */
  readonly leaseMs?: number
}

const failedKeptMs = 7 * 24 * 3_600_000
const hourMs = 3_600_000

/**
 * A JobQueue in the system database (SQLite or PostgreSQL, migration 0026), in the manner of pg-boss and
 * graphile-worker: jobs survive a restart. A job is a row; an instance takes it by leasing it
 * (`locked_by`, `locked_until`, renewed while it runs), and a job whose lease lapsed (its instance died)
 * is taken again by the next poll, once (a second loss fails it). A completed job is deleted, a failed one
 * kept a week. Schedules are rows whose tick moves in the same transaction that adds its job, so each
 * tick fires once across instances. Time and waiting come from the Clock. The database is the caller's:
 * close() leaves it open.
 */
export async function createSqlQueue(
  handle: Pick<DbHandle, 'db' | 'kind'>,
  options: SqlQueueOptions = {},
): Promise<JobQueue> {
  const clock = options.clock ?? systemClock
  const log = options.log ?? silentLog
  const closeTimeoutMs = options.closeTimeoutMs ?? defaultCloseTimeoutMs
  const leaseMs = options.leaseMs ?? 30_000
  const store = createQueueStore(handle.db, handle.kind)
  const instanceId = newId()
  const workers = new Map<string, SqlWorker<unknown>>()
  const running = new Map<Promise<void>, { jobId: string; controller: AbortController }>()
  let closed = false
  let closing: Promise<void> | null = null

  if (!options.shared) {
    const taken = await store.expireOthers(instanceId)
    if (taken > 0) log.warn({ jobs: taken }, 'jobs an earlier process was running are run again')
  }
  await store.pruneFailed(clock.now() - failedKeptMs)
  // Leases, polls and pruning on Node's timers (see SqlWorkerContext.timers); run times on `clock`.
  const timers = systemClock
  const heartbeat = timers.every(
    leaseMs / 3,
    () => (running.size > 0 ? store.renew(instanceId, timers.now() + leaseMs) : undefined),
    {
      onError: (err) => log.warn({ err }, 'job leases could not be renewed'),
    },
  )
  const prune = timers.every(hourMs, () => store.pruneFailed(clock.now() - failedKeptMs), {
    onError: (err) => log.warn({ err }, 'failed jobs could not be pruned'),
  })

  const context = {
    store,
    clock,
    log,
    instanceId,
    leaseMs,
    timers,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    maxStalls: 1,
    isClosed: () => closed,
    track(run: Promise<void>, jobId: string, controller: AbortController) {
      running.set(run, { jobId, controller })
      void run.finally(() => running.delete(run))
    },
  }

  /** Waits for running jobs up to the bound; then aborts them and gives their jobs back to wait. */
  async function drain(): Promise<void> {
    if (running.size === 0) return
    let cancelBound = () => {}
    const bound = new Promise<'timeout'>((resolve) => {
      cancelBound = clock.after(closeTimeoutMs, () => resolve('timeout'))
    })
    const outcome = await Promise.race([Promise.all(running.keys()), bound])
    cancelBound()
    if (outcome !== 'timeout') return
    log.warn(
      { running: running.size, closeTimeoutMs },
      'jobs still running when the queue closed; their signals are aborted',
    )
    const cut = [...running.values()]
    for (const { controller } of cut) controller.abort()
    // Not counted as an attempt or a loss: the next start (or another instance) runs them again.
    await store
      .release(
        cut.map((r) => r.jobId),
        instanceId,
        clock.now(),
      )
      .catch((err: unknown) => log.warn({ err }, 'jobs cut short could not be given back'))
  }

  return {
    shared: options.shared ?? false,
    async define(name, definition) {
      assertOpen(closed)
      checkQueueName(name)
      if (workers.has(name)) throw new Error(`Queue "${name}" is already defined`)
      const worker = startSqlWorker(name, definition, context)
      workers.set(name, worker as SqlWorker<unknown>)
      return worker.queue
    },

    async depth() {
      assertOpen(closed)
      const counts = await store.depth(clock.now())
      return [...workers.keys()].map((name) => counts.get(name) ?? { queue: name, waiting: 0, delayed: 0, active: 0 })
    },

    close() {
      closing ??= (async () => {
        closed = true
        await prune.stop()
        await Promise.all([...workers.values()].map((w) => w.stop()))
        await drain()
        await heartbeat.stop()
      })()
      return closing
    },
  }
}
