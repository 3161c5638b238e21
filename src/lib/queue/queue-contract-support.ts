import type { JobQueue, QueueLog } from './queue.js'

export interface QueueFixture {
  /** True when two opened instances share jobs and schedules (Redis), false when each is alone (memory). */
  readonly shared: boolean
  /** True when time moves only through advance() (memory, manual clock); false when real time passes (Redis). */
  readonly manualTime: boolean
  /** Opens one instance, as one Plinth process would. */
  open(options?: { closeTimeoutMs?: number; log?: QueueLog }): Promise<JobQueue>
  /** The time the queue sees. */
  now(): number
  /** Lets `ms` pass: moves the manual clock, firing what falls due; nothing with real time. */
  advance(ms: number): Promise<void>
}

/** What each capability group of the contract is handed by runQueueContract. */
export interface QueueContractContext {
  /** Opens an instance that is closed after the test. */
  open(options?: { closeTimeoutMs?: number; log?: QueueLog }): Promise<JobQueue>
  /** A fresh queue name: on Redis a test's jobs and schedules never reach the next test. */
  queueName(): string
}

export interface Deferred {
  readonly promise: Promise<void>
  resolve(): void
}

export function deferred(): Deferred {
  let resolve = () => {}
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

/** Waits until `condition` holds; fails the test after 15 s (a deadline, not an assertion on time). */
export async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A few turns of the event loop: long enough for anything that was going to happen at once. */
export async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

export function recordingLog() {
  const lines: Array<{ level: 'warn' | 'error'; message: string; fields: Record<string, unknown> }> = []
  const log: QueueLog = {
    warn: (fields, message) => lines.push({ level: 'warn', message, fields: fields as Record<string, unknown> }),
    error: (fields, message) => lines.push({ level: 'error', message, fields: fields as Record<string, unknown> }),
  }
  return { log, lines }
}
