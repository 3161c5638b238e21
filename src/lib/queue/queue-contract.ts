import { afterEach, describe, expect, it } from 'vitest'
import type { Job, JobQueue, QueueLog } from './queue.js'

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

interface Deferred {
  readonly promise: Promise<void>
  resolve(): void
}

function deferred(): Deferred {
  let resolve = () => {}
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

/** Waits until `condition` holds; fails the test after 15 s (a deadline, not an assertion on time). */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A few turns of the event loop: long enough for anything that was going to happen at once. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

function recordingLog() {
  const lines: Array<{ level: 'warn' | 'error'; message: string; fields: Record<string, unknown> }> = []
  const log: QueueLog = {
    warn: (fields, message) => lines.push({ level: 'warn', message, fields: fields as Record<string, unknown> }),
    error: (fields, message) => lines.push({ level: 'error', message, fields: fields as Record<string, unknown> }),
  }
  return { log, lines }
}

/**
 * The behaviour every JobQueue shares. Time is never asserted as a duration: a delay or a backoff is
 * checked as "not before" (ran at or after when it was due), ticks are counted per tick.
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
      expect(seen[0]).toMatchObject({ id, queue: name, name: 'greet', data: { who: 'Ada', at: '1970-01-01T00:00:00.000Z' }, attempt: 1, attempts: 1, tick: null })
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
      const jobs = await (await open()).define<{ later: object }>(queueName(), { handlers: { later: async () => void ran.push(fixture.now()) } })
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
      expect(errors[0]).toMatchObject({ message: 'job failed on its last attempt', fields: { queue: name, job: 'doomed', id, attempt: 3, attempts: 3 } })
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

    it(fixture.shared ? 'runs each job exactly once across two consumers' : 'runs each job exactly once with four at a time', async () => {
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
    })

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

    it(fixture.shared ? 'fires a schedule once per tick across two instances' : 'fires a schedule once per tick', async () => {
      const instances = fixture.shared ? [await open(), await open()] : [await open()]
      const name = queueName()
      const ticks: Array<{ tick: number | null; instance: number; id: string }> = []
      for (const [i, instance] of instances.entries()) {
        const jobs = await instance.define<{ tick: { every: string } }>(name, {
          handlers: { tick: async (job) => void ticks.push({ tick: job.tick, instance: i, id: job.id }) },
        })
        // Every instance declares the same schedule at start, as Plinth will.
        await jobs.schedule('every-second', { pattern: '* * * * * *', job: 'tick', data: { every: 'second' } })
      }
      const distinct = () => new Set(ticks.map((t) => t.tick)).size
      await until(async () => {
        if (fixture.manualTime) await fixture.advance(1000)
        return distinct() >= 3
      }, 'three ticks')
      await Promise.all(instances.map((instance) => instance.close()))
      const perTick = new Map<number | null, number>()
      for (const t of ticks) perTick.set(t.tick, (perTick.get(t.tick) ?? 0) + 1)
      expect([...perTick].filter(([, count]) => count !== 1)).toEqual([])
      for (const t of ticks) {
        expect(t.tick).toEqual(expect.any(Number))
        expect(t.tick! % 1000).toBe(0)
      }
      if (fixture.manualTime) {
        const sorted = ticks.map((t) => t.tick!).sort((a, b) => a - b)
        expect(sorted.slice(1).map((tick, i) => tick - sorted[i]!)).toEqual(sorted.slice(1).map(() => 1000))
      }
    })

    it('lists, replaces and removes schedules; a pattern is read in its time zone', async () => {
      const jobs = await (await open()).define<{ report: { kind: string } }>(queueName(), { handlers: { report: async () => {} } })
      await jobs.schedule('morning', { pattern: '0 9 * * *', timezone: 'Europe/Berlin', job: 'report', data: { kind: 'daily' } })
      await jobs.schedule('hourly', { pattern: '0 * * * *', job: 'report', data: { kind: 'hourly' } })
      const listed = await jobs.schedules()
      expect(listed.map((s) => [s.id, s.pattern, s.timezone, s.job]).sort()).toEqual([
        ['hourly', '0 * * * *', 'UTC', 'report'],
        ['morning', '0 9 * * *', 'Europe/Berlin', 'report'],
      ])
      const morning = listed.find((s) => s.id === 'morning')!
      expect(morning.next).toBeGreaterThan(fixture.now())
      const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      expect(berlin.format(morning.next!)).toBe('09:00:00')
      // The same id again replaces it.
      await jobs.schedule('morning', { pattern: '30 6 * * *', timezone: 'Europe/Berlin', job: 'report', data: { kind: 'early' } })
      const replaced = (await jobs.schedules()).filter((s) => s.id === 'morning')
      expect(replaced).toHaveLength(1)
      expect(berlin.format(replaced[0]!.next!)).toBe('06:30:00')
      expect(await jobs.unschedule('morning')).toBe(true)
      expect(await jobs.unschedule('morning')).toBe(false)
      expect((await jobs.schedules()).map((s) => s.id)).toEqual(['hourly'])
    })

    it('refuses a bad cron pattern or time zone with a clear error, and keeps no schedule', async () => {
      const jobs = await (await open()).define<{ tick: object }>(queueName(), { handlers: { tick: async () => {} } })
      const bad: Array<[string, string | undefined, string, RegExp]> = [
        ['61 * * * *', undefined, 'pattern', /Invalid cron pattern "61 \* \* \* \*": Invalid value for minute: 61/],
        ['every minute', undefined, 'pattern', /Invalid cron pattern "every minute"/],
        ['0 0 30 2 *', undefined, 'pattern', /never fires/],
        ['0 * * * *', 'Mars/Olympus', 'timezone', /Invalid time zone "Mars\/Olympus"/],
        ['0 * * * *', '+01:00', 'timezone', /Invalid time zone "\+01:00"/],
      ]
      for (const [pattern, timezone, field, message] of bad) {
        const refused = jobs.schedule('bad', { pattern, timezone, job: 'tick', data: {} })
        await expect(refused).rejects.toMatchObject({ code: 'validation_error', status: 422, details: { field } })
        await expect(refused).rejects.toThrow(message)
      }
      expect(await jobs.schedules()).toEqual([])
    })

    it('refuses bad jobs and options at once, adding nothing', async () => {
      const ran: string[] = []
      const q = await open()
      const jobs = await q.define<{ ok: { n: unknown } }>(queueName(), { handlers: { ok: async (job) => void ran.push(String(job.data.n)) } })
      const refusals: Array<[Promise<unknown>, RegExp, string | null]> = [
        [jobs.add('nope' as 'ok', { n: 1 }), /has no handler for job "nope"/, null],
        [jobs.add('ok', { n: 1 }, { attempts: 0 }), /attempts must be an integer from 1 to 100/, 'attempts'],
        [jobs.add('ok', { n: 1 }, { attempts: 1.5 }), /attempts/, 'attempts'],
        [jobs.add('ok', { n: 1 }, { delayMs: -1 }), /delayMs must be an integer/, 'delayMs'],
        [jobs.add('ok', { n: 1 }, { backoff: { type: 'linear' as 'fixed', delayMs: 10 } }), /backoff type/, 'backoff.type'],
        [jobs.add('ok', { n: 1 }, { backoff: { type: 'fixed', delayMs: Number.NaN } }), /backoff.delayMs/, 'backoff.delayMs'],
        [jobs.add('ok', { n: 10n }), /Job data is not JSON/, 'data'],
        [jobs.add('ok', undefined as unknown as { n: unknown }), /Job data is not JSON/, 'data'],
        [jobs.schedule('', { pattern: '0 * * * *', job: 'ok', data: { n: 1 } }), /Invalid schedule id/, 'id'],
        [jobs.schedule('s', { pattern: '0 * * * *', job: 'nope' as 'ok', data: { n: 1 } }), /has no handler/, null],
      ]
      for (const [refused, message, field] of refusals) {
        await expect(refused).rejects.toThrow(message)
        if (field) await expect(refused).rejects.toMatchObject({ code: 'validation_error', details: { field } })
      }
      await expect(q.define('a:b', { handlers: { x: async () => {} } })).rejects.toThrow(/Invalid queue name/)
      await expect(q.define(queueName(), { handlers: {} })).rejects.toThrow(/at least one handler/)
      await expect(q.define(queueName(), { concurrency: 0, handlers: { x: async () => {} } })).rejects.toThrow(/concurrency/)
      await expect(q.define(jobs.name, { handlers: { x: async () => {} } })).rejects.toThrow(/already defined/)
      await jobs.add('ok', { n: 'last' })
      await until(() => ran.length === 1, 'the valid job')
      expect(ran).toEqual(['last'])
      expect(await jobs.schedules()).toEqual([])
    })

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
      expect(lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual(['jobs still running when the queue closed; their signals are aborted'])
    })
  })
}
