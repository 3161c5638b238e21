import { expect, it } from 'vitest'
import { until, type QueueContractContext, type QueueFixture } from './queue-contract-support.js'

/** The contract's cron schedules: one run per tick across instances, listing, replacing, removing, refusals. Called inside runQueueContract's describe. */
export function runScheduleContract(fixture: QueueFixture, { open, queueName }: QueueContractContext): void {
  it(
    fixture.shared ? 'fires a schedule once per tick across two instances' : 'fires a schedule once per tick',
    async () => {
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
    },
  )

  it('lists, replaces and removes schedules; a pattern is read in its time zone', async () => {
    const jobs = await (await open()).define<{ report: { kind: string } }>(queueName(), {
      handlers: { report: async () => {} },
    })
    await jobs.schedule('morning', {
      pattern: '0 9 * * *',
      timezone: 'Europe/Berlin',
      job: 'report',
      data: { kind: 'daily' },
    })
    await jobs.schedule('hourly', { pattern: '0 * * * *', job: 'report', data: { kind: 'hourly' } })
    const listed = await jobs.schedules()
    expect(listed.map((s) => [s.id, s.pattern, s.timezone, s.job]).sort()).toEqual([
      ['hourly', '0 * * * *', 'UTC', 'report'],
      ['morning', '0 9 * * *', 'Europe/Berlin', 'report'],
    ])
    const morning = listed.find((s) => s.id === 'morning')!
    expect(morning.next).toBeGreaterThan(fixture.now())
    const berlin = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
    expect(berlin.format(morning.next!)).toBe('09:00:00')
    // The same id again replaces it.
    await jobs.schedule('morning', {
      pattern: '30 6 * * *',
      timezone: 'Europe/Berlin',
      job: 'report',
      data: { kind: 'early' },
    })
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
}
