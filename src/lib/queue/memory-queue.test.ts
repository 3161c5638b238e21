import { describe, expect, it } from 'vitest'
import { createManualClock } from '../clock-manual.js'
import { createMemoryQueue } from './memory-queue.js'

describe('memory JobQueue: schedules on a manual clock', () => {
  it('fires a tick missed while the process was suspended once, and does not make up the others', async () => {
    const hour = 3_600_000
    const start = Date.UTC(2025, 0, 1, 0, 10)
    const time = createManualClock(start)
    const queue = createMemoryQueue({ clock: time })
    const ticks: Array<number | null> = []
    try {
      const jobs = await queue.define<{ tick: object }>('hourly', {
        handlers: { tick: async (job) => void ticks.push(job.tick) },
      })
      await jobs.schedule('h', { pattern: '0 * * * *', job: 'tick', data: {} })
      // Suspended from 00:10 to 05:10: the 01:00 tick fires late, 02:00-05:00 are skipped.
      await time.jump(5 * hour)
      expect(ticks).toEqual([Date.UTC(2025, 0, 1, 1)])
      expect((await jobs.schedules())[0]!.next).toBe(Date.UTC(2025, 0, 1, 6))
      await time.advance(hour)
      expect(ticks).toEqual([Date.UTC(2025, 0, 1, 1), Date.UTC(2025, 0, 1, 6)])
    } finally {
      await queue.close()
    }
  })

  it('reads the pattern in its time zone, across a daylight-saving change', async () => {
    const time = createManualClock(Date.UTC(2025, 2, 29, 0))
    const queue = createMemoryQueue({ clock: time })
    const ticks: Array<number | null> = []
    try {
      const jobs = await queue.define<{ tick: object }>('berlin', {
        handlers: { tick: async (job) => void ticks.push(job.tick) },
      })
      await jobs.schedule('morning', { pattern: '0 9 * * *', timezone: 'Europe/Berlin', job: 'tick', data: {} })
      await time.advance(3 * 24 * 3_600_000)
      // 09:00 CET on 29 March, then 09:00 CEST from 30 March.
      expect(ticks.map((t) => new Date(t!).toISOString())).toEqual([
        '2025-03-29T08:00:00.000Z',
        '2025-03-30T07:00:00.000Z',
        '2025-03-31T07:00:00.000Z',
      ])
    } finally {
      await queue.close()
    }
  })

  it('drops delayed jobs and schedules on close: nothing fires afterwards', async () => {
    const time = createManualClock(Date.UTC(2025, 0, 1))
    const queue = createMemoryQueue({ clock: time })
    const ran: string[] = []
    const jobs = await queue.define<{ x: object }>('dropped', { handlers: { x: async () => void ran.push('x') } })
    await jobs.add('x', {}, { delayMs: 1000 })
    await jobs.schedule('s', { pattern: '* * * * * *', job: 'x', data: {} })
    await queue.close()
    await time.advance(10_000)
    expect(ran).toEqual([])
  })
})
