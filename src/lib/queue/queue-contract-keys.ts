import { expect, it } from 'vitest'
import type { NamedQueue } from './queue.js'
import { deferred, until, type QueueContractContext, type QueueFixture } from './queue-contract-support.js'

/** The contract's job keys (`add`'s `key`): one unfinished job per key and queue. Called inside runQueueContract's describe. */
export function runKeyContract(fixture: QueueFixture, { open, queueName }: QueueContractContext): void {
  it('runs a job added twice under one key once; the key is free again once it completed', async () => {
    const gate = deferred()
    const seen: string[] = []
    const jobs = await (await open()).define<{ once: { v: string } }>(queueName(), {
      handlers: {
        once: async (job) => {
          seen.push(job.data.v)
          await gate.promise
        },
      },
    })
    const first = await jobs.add('once', { v: 'first' }, { key: 'k1' })
    // Waiting, then running: the same key adds nothing and answers the first job's id.
    expect(await jobs.add('once', { v: 'second' }, { key: 'k1' })).toBe(first)
    await until(() => seen.length === 1, 'the first job')
    expect(await jobs.add('once', { v: 'third' }, { key: 'k1' })).toBe(first)
    const other = await jobs.add('once', { v: 'other' }, { key: 'k2' })
    expect(other).not.toBe(first)
    gate.resolve()
    await until(() => seen.length === 2, 'the job of the other key')
    const again = await jobs.add('once', { v: 'again' }, { key: 'k1' })
    expect(again).not.toBe(first)
    await until(() => seen.length === 3, 'the key used again')
    expect(seen).toEqual(['first', 'other', 'again'])
  })

  it('holds a key while its job is delayed and between retries, and frees it when the job fails for good', async () => {
    const runs: Array<[string, number]> = []
    const failed: string[] = []
    const jobs: NamedQueue<{ flaky: object; later: object }> = await (await open()).define(queueName(), {
      handlers: {
        flaky: async (job) => {
          runs.push(['flaky', job.attempt])
          throw new Error('no')
        },
        later: async () => void runs.push(['later', 1]),
      },
      onFailed: (job) => void failed.push(job.id),
    })
    const delayed = await jobs.add('later', {}, { key: 'd', delayMs: 300 })
    expect(await jobs.add('later', {}, { key: 'd' })).toBe(delayed)
    const id = await jobs.add('flaky', {}, { key: 'r', attempts: 2, backoff: { type: 'fixed', delayMs: 200 } })
    await until(() => runs.length === 1, 'the first attempt')
    expect(await jobs.add('flaky', {}, { key: 'r' })).toBe(id)
    await fixture.advance(300)
    await until(() => failed.length === 1 && runs.length === 3, 'the last attempt and the delayed job')
    expect(failed).toEqual([id])
    // The failure is recorded just after onFailed is told: the key frees then.
    await until(async () => (await jobs.add('flaky', {}, { key: 'r' })) !== id, 'the key to free')
    await until(() => runs.length === 4, 'the job of the freed key')
    expect(runs.filter(([name]) => name === 'later')).toEqual([['later', 1]])
    expect(runs.filter(([name]) => name === 'flaky').map(([, attempt]) => attempt)).toEqual([1, 2, 1])
  })
}
