import { expect, it } from 'vitest'
import {
  deferred,
  recordingLog,
  turns,
  until,
  type QueueContractContext,
  type QueueFixture,
} from './queue-contract-support.js'

/** The contract's close(): waiting for running jobs, refusing work after, and its bound. Called inside runQueueContract's describe. */
export function runCloseContract(fixture: QueueFixture, { open, queueName }: QueueContractContext): void {
  it('close() waits for a running job, then refuses new work', async () => {
    const gate = deferred()
    let started = false
    let finished = false
    const q = await open()
    const jobs = await q.define<{ slow: object }>(queueName(), {
      handlers: {
        slow: async () => {
          started = true
          await gate.promise
          finished = true
        },
      },
    })
    await jobs.add('slow', {})
    await until(() => started, 'the job to start')
    let closed = false
    const closing = q.close().then(() => (closed = true))
    await turns(20)
    expect(closed).toBe(false)
    gate.resolve()
    await closing
    expect(finished).toBe(true)
    await q.close() // idempotent
    await expect(jobs.add('slow', {})).rejects.toThrow(/closed/)
    await expect(jobs.schedule('s', { pattern: '0 * * * *', job: 'slow', data: {} })).rejects.toThrow(/closed/)
    await expect(jobs.unschedule('s')).rejects.toThrow(/closed/)
    await expect(jobs.schedules()).rejects.toThrow(/closed/)
    await expect(q.define(queueName(), { handlers: { x: async () => {} } })).rejects.toThrow(/closed/)
  })

  it('close() stops waiting at its bound and aborts the running job', async () => {
    const { log, lines } = recordingLog()
    let signal: AbortSignal | null = null
    const q = await open({ closeTimeoutMs: 300, log })
    const jobs = await q.define<{ stuck: object }>(queueName(), {
      handlers: {
        stuck: async (job) => {
          signal = job.signal
          await new Promise((resolve) => job.signal.addEventListener('abort', resolve))
        },
      },
    })
    await jobs.add('stuck', {})
    await until(() => signal !== null, 'the job to start')
    const closing = q.close()
    await fixture.advance(300)
    await closing
    expect(signal!.aborted).toBe(true)
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      'jobs still running when the queue closed; their signals are aborted',
    ])
  })
}
