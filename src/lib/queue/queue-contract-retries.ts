import { expect, it } from 'vitest'
import type { Job } from './queue.js'
import { recordingLog, until, type QueueContractContext, type QueueFixture } from './queue-contract-support.js'

/** The contract's retries and failures: backoff, the last attempt, onFailed and its errors. Called inside runQueueContract's describe. */
export function runRetryContract(fixture: QueueFixture, { open, queueName }: QueueContractContext): void {
  it('retries with exponential backoff, then succeeds', async () => {
    const { log, lines } = recordingLog()
    const attempts: Array<[number, number, number]> = []
    const failed: unknown[] = []
    const jobs = await (await open({ log })).define<{ flaky: object }>(queueName(), {
      handlers: {
        flaky: async (job) => {
          attempts.push([job.attempt, job.attempts, fixture.now()])
          if (job.attempt < 3) throw new Error(`fail ${job.attempt}`)
        },
      },
      onFailed: (job) => void failed.push(job),
    })
    await jobs.add('flaky', {}, { attempts: 3, backoff: { type: 'exponential', delayMs: 100 } })
    await until(() => attempts.length === 1, 'the first attempt')
    await fixture.advance(100)
    await until(() => attempts.length === 2, 'the first retry')
    await fixture.advance(200)
    await until(() => attempts.length === 3, 'the second retry')
    expect(attempts.map(([attempt, of]) => [attempt, of])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ])
    // 100 ms before the first retry, then 200 ms (each "not before").
    expect(attempts[1]![2] - attempts[0]![2]).toBeGreaterThanOrEqual(100)
    expect(attempts[2]![2] - attempts[1]![2]).toBeGreaterThanOrEqual(200)
    expect(failed).toEqual([])
    expect(lines.map((l) => [l.level, l.fields.attempt])).toEqual([
      ['warn', 1],
      ['warn', 2],
    ])
  })

  it('after the last attempt, the failure is logged and reaches onFailed once', async () => {
    const { log, lines } = recordingLog()
    const attempts: number[] = []
    const failed: Array<{ job: Job; error: unknown }> = []
    const name = queueName()
    const jobs = await (await open({ log })).define<{ doomed: { n: number } }>(name, {
      handlers: {
        doomed: async (job) => {
          attempts.push(fixture.now())
          throw new Error(`fail ${job.attempt}`)
        },
      },
      onFailed: (job, error) => void failed.push({ job, error }),
    })
    const id = await jobs.add('doomed', { n: 7 }, { attempts: 3, backoff: { type: 'fixed', delayMs: 150 } })
    for (let i = 1; i < 3; i++) {
      await until(() => attempts.length === i, `attempt ${i}`)
      await fixture.advance(150)
    }
    await until(() => failed.length === 1, 'the failure callback')
    expect(attempts).toHaveLength(3)
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(150)
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(150)
    expect(failed[0]!.job).toMatchObject({ id, queue: name, name: 'doomed', data: { n: 7 }, attempt: 3, attempts: 3 })
    expect(failed[0]!.error).toMatchObject({ message: 'fail 3' })
    const errors = lines.filter((l) => l.level === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({
      message: 'job failed on its last attempt',
      fields: { queue: name, job: 'doomed', id, attempt: 3, attempts: 3 },
    })
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(2)
    // Logged with the error, never with the job's data.
    expect(JSON.stringify(errors[0]!.fields)).not.toContain('"n":7')
  })

  it('does not retry by default', async () => {
    const runs: number[] = []
    const failed: number[] = []
    const jobs = await (await open()).define<{ once: object }>(queueName(), {
      handlers: {
        once: async (job) => {
          runs.push(job.attempt)
          throw new Error('no')
        },
      },
      onFailed: (job) => void failed.push(job.attempts),
    })
    await jobs.add('once', {})
    await until(() => failed.length === 1, 'the failure callback')
    await fixture.advance(1000)
    expect(runs).toEqual([1])
    expect(failed).toEqual([1])
  })

  it('logs a throwing failure callback and keeps running jobs', async () => {
    const { log, lines } = recordingLog()
    const ran: string[] = []
    const jobs = await (await open({ log })).define<{ bad: object; good: object }>(queueName(), {
      handlers: {
        bad: async () => {
          throw new Error('handler')
        },
        good: async () => void ran.push('good'),
      },
      onFailed: () => {
        throw new Error('callback')
      },
    })
    await jobs.add('bad', {})
    await until(() => lines.some((l) => l.message === 'the failure callback of a job threw'), 'the callback error')
    await jobs.add('good', {})
    await until(() => ran.length === 1, 'the next job')
  })
}
