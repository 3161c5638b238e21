import { afterEach, describe, expect, it } from 'vitest'
import type { Job, JobQueue, QueueLog } from './queue.js'
import { runCloseContract } from './queue-contract-close.js'
import { runDepthContract } from './queue-contract-depth.js'
import { runKeyContract } from './queue-contract-keys.js'
import { runRetryContract } from './queue-contract-retries.js'
import { runScheduleContract } from './queue-contract-schedules.js'
import { deferred, turns, until, type QueueContractContext, type QueueFixture } from './queue-contract-support.js'

export type { QueueFixture } from './queue-contract-support.js'

/**
 * The behaviour every JobQueue shares. Time is never asserted as a duration: a delay or a backoff is
 * checked as "not before" (ran at or after when it was due), ticks are counted per tick. Running jobs is
 * here; keys, retries, schedules and closing are each a capability group of their own (queue-contract-*.ts).
 */
export function runQueueContract(name: string, fixture: QueueFixture): void {
  describe(`JobQueue contract: ${name}`, () => {
    const opened: JobQueue[] = []
    let n = 0
    // A fresh queue name per test: on Redis a test's jobs and schedules never reach the next test.
    const queueName = () => `q${++n}-${Math.random().toString(36).slice(2, 8)}`
    async function open(options?: { closeTimeoutMs?: number; log?: QueueLog }): Promise<JobQueue> {
      const queue = await fixture.open(options)
      opened.push(queue)
      return queue
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((q) => q.close()))
    })

    const context: QueueContractContext = { open, queueName }

    runKeyContract(fixture, context)
    runDepthContract(fixture, context)

    it('says whether other instances share its jobs', async () => {
      expect((await open()).shared).toBe(fixture.shared)
    })

    it('runs a job once, on a later turn, with its data as JSON', async () => {
      const seen: Job[] = []
      const name = queueName()
      const jobs = await (await open()).define<{ greet: { who: string; at: unknown } }>(name, {
        handlers: { greet: async (job) => void seen.push(job) },
      })
      const adding = jobs.add('greet', { who: 'Ada', at: new Date(0) })
      expect(seen).toEqual([])
      const id = await adding
      await until(() => seen.length === 1, 'the job')
      expect(seen[0]).toMatchObject({
        id,
        queue: name,
        name: 'greet',
        data: { who: 'Ada', at: '1970-01-01T00:00:00.000Z' },
        attempt: 1,
        attempts: 1,
        tick: null,
      })
      expect(seen[0]!.signal.aborted).toBe(false)
      // A later job runs after it, and the first one does not run again.
      const second = await jobs.add('greet', { who: 'Bob', at: null })
      await until(() => seen.length === 2, 'the second job')
      expect(seen.map((job) => [job.id, (job.data as { who: string }).who])).toEqual([
        [id, 'Ada'],
        [second, 'Bob'],
      ])
    })

    it('sends each job to the handler of its name', async () => {
      const seen: string[] = []
      const jobs = await (await open()).define<{ a: { n: number }; b: { s: string } }>(queueName(), {
        handlers: {
          a: async (job) => void seen.push(`a:${job.data.n}`),
          b: async (job) => void seen.push(`b:${job.data.s}`),
        },
      })
      await jobs.add('b', { s: 'x' })
      await jobs.add('a', { n: 1 })
      await until(() => seen.length === 2, 'both jobs')
      expect(seen.sort()).toEqual(['a:1', 'b:x'])
    })

    it('runs a delayed job after its delay, not before', async () => {
      const ran: number[] = []
      const jobs = await (await open()).define<{ later: object }>(queueName(), {
        handlers: { later: async () => void ran.push(fixture.now()) },
      })
      const added = fixture.now()
      await jobs.add('later', {}, { delayMs: 400 })
      if (fixture.manualTime) {
        await fixture.advance(399)
        expect(ran).toEqual([])
      }
      await fixture.advance(fixture.manualTime ? 1 : 400)
      await until(() => ran.length === 1, 'the delayed job')
      expect(ran[0]! - added).toBeGreaterThanOrEqual(400)
    })

    it(
      fixture.shared
        ? 'runs each job exactly once across two consumers'
        : 'runs each job exactly once with four at a time',
      async () => {
        const instances = fixture.shared ? [await open(), await open()] : [await open()]
        const name = queueName()
        const runs = new Map<string, number>()
        const perInstance = instances.map(() => 0)
        const queues = await Promise.all(
          instances.map((instance, i) =>
            instance.define<{ count: { n: number } }>(name, {
              concurrency: 4,
              handlers: {
                count: async (job) => {
                  runs.set(job.id, (runs.get(job.id) ?? 0) + 1)
                  perInstance[i]!++
                  // Held briefly, so runs overlap within and across consumers.
                  await new Promise((resolve) => setTimeout(resolve, 1))
                },
              },
            }),
          ),
        )
        const ids: string[] = []
        for (let i = 0; i < 200; i++) ids.push(await queues[i % queues.length]!.add('count', { n: i }))
        expect(new Set(ids).size).toBe(200)
        await until(() => runs.size === 200, '200 jobs')
        // Closing waits for anything still running, so a second run could not slip in after the count.
        await Promise.all(instances.map((instance) => instance.close()))
        expect([...runs.keys()].sort()).toEqual([...ids].sort())
        expect([...runs].filter(([, count]) => count !== 1)).toEqual([])
        expect(perInstance.reduce((a, b) => a + b)).toBe(200)
      },
    )

    it('runs at most `concurrency` jobs at once in an instance', async () => {
      const gate = deferred()
      let active = 0
      let peak = 0
      let done = 0
      const jobs = await (await open()).define<{ hold: object }>(queueName(), {
        concurrency: 2,
        handlers: {
          hold: async () => {
            peak = Math.max(peak, ++active)
            await gate.promise
            active--
            done++
          },
        },
      })
      for (let i = 0; i < 6; i++) await jobs.add('hold', {})
      await until(() => active === 2, 'two running jobs')
      await turns()
      expect(active).toBe(2)
      gate.resolve()
      await until(() => done === 6, 'all jobs')
      expect(peak).toBe(2)
    })

    it('refuses bad jobs and options at once, adding nothing', async () => {
      const ran: string[] = []
      const q = await open()
      const jobs = await q.define<{ ok: { n: unknown } }>(queueName(), {
        handlers: { ok: async (job) => void ran.push(String(job.data.n)) },
      })
      const refusals: Array<[Promise<unknown>, RegExp, string | null]> = [
        [jobs.add('nope' as 'ok', { n: 1 }), /has no handler for job "nope"/, null],
        [jobs.add('ok', { n: 1 }, { attempts: 0 }), /attempts must be an integer from 1 to 100/, 'attempts'],
        [jobs.add('ok', { n: 1 }, { attempts: 1.5 }), /attempts/, 'attempts'],
        [jobs.add('ok', { n: 1 }, { delayMs: -1 }), /delayMs must be an integer/, 'delayMs'],
        [
          jobs.add('ok', { n: 1 }, { backoff: { type: 'linear' as 'fixed', delayMs: 10 } }),
          /backoff type/,
          'backoff.type',
        ],
        [
          jobs.add('ok', { n: 1 }, { backoff: { type: 'fixed', delayMs: Number.NaN } }),
          /backoff.delayMs/,
          'backoff.delayMs',
        ],
        [jobs.add('ok', { n: 10n }), /Job data is not JSON/, 'data'],
        [jobs.add('ok', undefined as unknown as { n: unknown }), /Job data is not JSON/, 'data'],
        [jobs.add('ok', { n: 1 }, { key: 'a key' }), /Invalid job key/, 'key'],
        [jobs.add('ok', { n: 1 }, { key: '' }), /Invalid job key/, 'key'],
        [jobs.schedule('', { pattern: '0 * * * *', job: 'ok', data: { n: 1 } }), /Invalid schedule id/, 'id'],
        [jobs.schedule('s', { pattern: '0 * * * *', job: 'nope' as 'ok', data: { n: 1 } }), /has no handler/, null],
      ]
      for (const [refused, message, field] of refusals) {
        await expect(refused).rejects.toThrow(message)
        if (field) await expect(refused).rejects.toMatchObject({ code: 'validation_error', details: { field } })
      }
      await expect(q.define('a:b', { handlers: { x: async () => {} } })).rejects.toThrow(/Invalid queue name/)
      await expect(q.define(queueName(), { handlers: {} })).rejects.toThrow(/at least one handler/)
      await expect(q.define(queueName(), { concurrency: 0, handlers: { x: async () => {} } })).rejects.toThrow(
        /concurrency/,
      )
      await expect(q.define(jobs.name, { handlers: { x: async () => {} } })).rejects.toThrow(/already defined/)
      await jobs.add('ok', { n: 'last' })
      await until(() => ran.length === 1, 'the valid job')
      expect(ran).toEqual(['last'])
      expect(await jobs.schedules()).toEqual([])
    })

    runRetryContract(fixture, context)
    runScheduleContract(fixture, context)
    runCloseContract(fixture, context)
  })
}
