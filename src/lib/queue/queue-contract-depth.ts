import { expect, it } from 'vitest'
import { deferred, until, type QueueContractContext, type QueueFixture } from './queue-contract-support.js'

/** depth(): what /metrics reports of each queue. Counts are read until they settle, never timed. */
export function runDepthContract(_fixture: QueueFixture, context: QueueContractContext): void {
  it('reports each defined queue by state: due, delayed, running; zeros once done', async () => {
    const queue = await context.open()
    const name = context.queueName()
    const release = deferred()
    const started: number[] = []
    const jobs = await queue.define<{ hold: { n: number } }>(name, {
      handlers: {
        hold: async (job) => {
          started.push(job.data.n)
          await release.promise
        },
      },
    })
    const mine = async () => (await queue.depth()).find((d) => d.queue === name)
    expect(await mine()).toEqual({ queue: name, waiting: 0, delayed: 0, active: 0 })

    await jobs.add('hold', { n: 1 })
    await until(() => started.length === 1, 'the first job to start')
    await jobs.add('hold', { n: 2 })
    // Far enough ahead that it stays delayed whatever the clock does during the test.
    await jobs.add('hold', { n: 3 }, { delayMs: 3_600_000 })
    await until(async () => (await mine())?.delayed === 1 && (await mine())?.waiting === 1, 'one due, one delayed')
    expect(await mine()).toEqual({ queue: name, waiting: 1, delayed: 1, active: 1 })

    release.resolve()
    await until(() => started.length === 2, 'the second job')
    await until(async () => (await mine())?.active === 0, 'both due jobs to finish')
    expect(await mine()).toEqual({ queue: name, waiting: 0, delayed: 1, active: 0 })
  })
}
