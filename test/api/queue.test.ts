import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NamedQueue } from '../../src/lib/queue/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { startSibling } from '../support/sibling.js'

/**
 * The app's job queue (lib/queue, docs/queue.md): created from config, closed on shutdown. Its behaviour is
 * the contract suite's (src/lib/queue); this file checks the wiring: which implementation (and that jobs
 * outlive a restart without Redis), the key prefix, and two instances of the app sharing jobs and schedules.
 */
const databaseUrl = process.env.TEST_DATABASE_URL
const redisUrl = process.env.TEST_REDIS_URL

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('the app job queue', () => {
  it("is the instance's own (in the system database) without REDIS_URL and shared through Redis with it", async () => {
    const server = await startServer()
    try {
      expect(server.app.queue.shared).toBe(Boolean(redisUrl))
    } finally {
      await server.stop()
    }
  })

  it('stopping the app waits for a running job, and takes no job after', async () => {
    const server = await startServer()
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const events: string[] = []
    const jobs = await server.app.queue.define<{ hold: object }>('wiring', {
      handlers: {
        hold: async () => {
          events.push('started')
          await held
          events.push('finished')
        },
      },
    })
    await jobs.add('hold', {})
    await until(() => events.length === 1, 'the job to start')
    const stopping = server.stop().then(() => events.push('stopped'))
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve))
    expect(events).toEqual(['started'])
    release()
    await stopping
    expect(events).toEqual(['started', 'finished', 'stopped'])
    await expect(jobs.add('hold', {})).rejects.toThrow(/closed/)
  })
})

describe.runIf(!redisUrl)(
  'the embedded job queue (no REDIS_URL): jobs are rows of the system database (decision 055)',
  () => {
    it('a delayed job and a schedule added before a restart are there after it, and the job runs', async () => {
      let server = await startServer()
      try {
        type Jobs = { later: { n: number } }
        const before = await server.app.queue.define<Jobs>('durable', { handlers: { later: async () => {} } })
        await before.add('later', { n: 7 }, { delayMs: 300 })
        await before.schedule('nightly', { pattern: '0 3 * * *', job: 'later', data: { n: 0 } })
        server = await server.restart()
        const ran: number[] = []
        const after = await server.app.queue.define<Jobs>('durable', {
          handlers: { later: async (job) => void ran.push(job.data.n) },
        })
        await until(() => ran.length === 1, 'the delayed job after the restart')
        expect(ran).toEqual([7])
        expect((await after.schedules()).map((s) => [s.id, s.pattern])).toEqual([['nightly', '0 3 * * *']])
      } finally {
        await server.stop()
      }
    })
  },
)

describe.runIf(Boolean(databaseUrl && redisUrl))(
  'the job queue of two instances (runs only when TEST_DATABASE_URL and TEST_REDIS_URL are both set)',
  () => {
    let a: TestServer
    let b: TestServer
    beforeAll(async () => {
      a = await startServer({ REDIS_URL: redisUrl ?? '' })
      b = await startSibling(a, {})
    })
    afterAll(async () => {
      await b?.stop()
      await a?.stop()
      // The schedule below stays in Redis until removed; the harness's prefix is this run's alone.
      const redis = new Redis(redisUrl!)
      try {
        const keys = await redis.keys(`${a.app.config.redisPrefix}queue:*`)
        if (keys.length > 0) await redis.unlink(...keys)
      } finally {
        redis.disconnect()
      }
    })

    it('a job added on one instance runs once, on either, under the deployment key prefix', async () => {
      const runs = new Map<string, string[]>()
      const define = (server: TestServer, label: string) =>
        server.app.queue.define<{ work: { n: number } }>('shared-work', {
          concurrency: 2,
          handlers: { work: async (job) => void runs.set(job.id, [...(runs.get(job.id) ?? []), label]) },
        })
      const onA = await define(a, 'a')
      await define(b, 'b')
      const ids: string[] = []
      for (let n = 0; n < 50; n++) ids.push(await onA.add('work', { n }))
      await until(() => runs.size === 50, '50 jobs')
      expect([...runs.keys()].sort()).toEqual([...ids].sort())
      expect([...runs].filter(([, instances]) => instances.length !== 1)).toEqual([])
      const redis = new Redis(redisUrl!)
      try {
        expect((await redis.keys(`${a.app.config.redisPrefix}queue:shared-work:*`)).length).toBeGreaterThan(0)
      } finally {
        redis.disconnect()
      }
    })

    it('a schedule both instances declare fires once per tick', async () => {
      const ticks: Array<number | null> = []
      let last: NamedQueue<{ tick: object }> | null = null
      for (const server of [a, b]) {
        last = await server.app.queue.define<{ tick: object }>('shared-cron', {
          handlers: { tick: async (job) => void ticks.push(job.tick) },
        })
        await last.schedule('every-second', { pattern: '* * * * * *', job: 'tick', data: {} })
      }
      await until(() => new Set(ticks).size >= 3, 'three ticks')
      expect(await last!.unschedule('every-second')).toBe(true)
      const perTick = new Map<number | null, number>()
      for (const tick of ticks) perTick.set(tick, (perTick.get(tick) ?? 0) + 1)
      expect([...perTick].filter(([tick, count]) => tick === null || count !== 1)).toEqual([])
    })
  },
)
