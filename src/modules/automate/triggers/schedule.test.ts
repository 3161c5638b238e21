import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { createManualClock } from '../../../lib/clock-manual.js'
import { createMemoryQueue, type JobQueue, type NamedQueue } from '../../../lib/queue/index.js'
import type { FlowForRun } from '../model.js'
import { createTriggers } from './create-triggers.js'
import { fakeDeps, makeFlow } from './fakes.js'
import { scheduleQueue } from './schedule.js'

const hour = 3_600_000
const day = 24 * hour

/** The queue as the app has it, keeping the schedule queue's handle so a test can list its schedules. */
function spyQueue(inner: JobQueue) {
  let named: NamedQueue<unknown> | undefined
  const queue: JobQueue = {
    shared: inner.shared,
    async define<J>(name: string, definition: Parameters<JobQueue['define']>[1]) {
      const handle = await inner.define<J>(name, definition as never)
      if (name === scheduleQueue) named = handle as NamedQueue<unknown>
      return handle
    },
    close: () => inner.close(),
  } as JobQueue
  return { queue, schedules: async () => (await named!.schedules()).map((s) => `${s.id} ${s.pattern} ${s.timezone}`) }
}

/** Triggers on a manual clock and a memory queue, with `initial` flows in the lookup before start-up. */
async function setup(startMs: number, initial: FlowForRun[] = []) {
  const clock = createManualClock(startMs)
  const spy = spyQueue(createMemoryQueue({ clock }))
  const { deps, flows, runs } = fakeDeps({ clock, queue: spy.queue })
  for (const flow of initial) await flows.put(flow)
  const triggers = await createTriggers(deps)
  return {
    clock,
    flows,
    runs,
    schedules: spy.schedules,
    ticks: () => runs.calls.map((call) => (call.trigger.body as { scheduledAt: string }).scheduledAt),
    async close() {
      await triggers.close()
      await spy.queue.close()
    },
  }
}

describe('schedule trigger', () => {
  it('fires a Europe/Berlin schedule at the right instants across the spring-forward change: once a day, the gap time right after the gap', async () => {
    // Sunday 29 March 2026, 02:00 CET becomes 03:00 CEST: 02:30 does not exist that day.
    const flow = makeFlow('schedule', { cron: '30 2 * * *', timezone: 'Europe/Berlin' })
    const t = await setup(Date.UTC(2026, 2, 27, 12), [flow])
    try {
      await t.clock.advance(4 * day)
      expect(t.ticks()).toEqual([
        '2026-03-28T01:30:00.000Z', // 02:30 CET
        '2026-03-29T01:00:00.000Z', // 03:00 CEST, right after the gap
        '2026-03-30T00:30:00.000Z', // 02:30 CEST
        '2026-03-31T00:30:00.000Z',
      ])
      expect(
        t.runs.calls.every((call) => call.mode === 'start' && call.initiator === null && call.flow.id === flow.id),
      ).toBe(true)
      expect(t.runs.calls[0]!.trigger).toEqual({
        type: 'schedule',
        event: null,
        collection: null,
        method: null,
        body: { scheduledAt: '2026-03-28T01:30:00.000Z', cron: '30 2 * * *', timezone: 'Europe/Berlin' },
      })
    } finally {
      await t.close()
    }
  })

  it('fires once at the repeated hour of the fall-back change, and hourly ticks run through both 02:00s', async () => {
    // Sunday 25 October 2026, 03:00 CEST becomes 02:00 CET: 02:30 happens twice.
    const daily = makeFlow('schedule', { cron: '30 2 * * *', timezone: 'Europe/Berlin' })
    const t = await setup(Date.UTC(2026, 9, 23, 12), [daily])
    try {
      await t.clock.advance(3 * day)
      expect(t.ticks()).toEqual([
        '2026-10-24T00:30:00.000Z', // 02:30 CEST
        '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST); not again at 01:30Z (CET)
        '2026-10-26T01:30:00.000Z', // 02:30 CET
      ])
    } finally {
      await t.close()
    }
    const hourly = makeFlow('schedule', { cron: '0 * * * *', timezone: 'Europe/Berlin' })
    const h = await setup(Date.UTC(2026, 9, 24, 21, 30), [hourly])
    try {
      // From 23:30 CEST on the 24th to 05:30 CET on the 25th: seven hours of wall clock, eight real hours.
      await h.clock.advance(8 * hour)
      const ticks = h.ticks()
      expect(ticks).toHaveLength(8)
      expect(new Set(ticks).size).toBe(8)
      expect(ticks).toContain('2026-10-25T00:00:00.000Z') // 02:00 CEST
      expect(ticks).toContain('2026-10-25T01:00:00.000Z') // 02:00 CET
    } finally {
      await h.close()
    }
  })

  it('registers a flow when it becomes active, follows its changes, and removes it when it stops being an active schedule flow', async () => {
    const t = await setup(Date.UTC(2026, 0, 1))
    try {
      const draft = makeFlow('schedule', { cron: '0 * * * *' }, { status: 'draft', id: 's1' })
      await t.flows.put(draft)
      expect(await t.schedules()).toEqual([])
      await t.flows.put({ ...draft, status: 'active' })
      expect(await t.schedules()).toEqual(['flow:s1 0 * * * * UTC'])
      const moved = makeFlow('schedule', { cron: '*/15 * * * *', timezone: 'Asia/Tokyo' }, { id: 's1' })
      await t.flows.put(moved)
      expect(await t.schedules()).toEqual(['flow:s1 */15 * * * * Asia/Tokyo'])
      await t.flows.put({ ...moved, status: 'inactive' })
      expect(await t.schedules()).toEqual([])
      await t.flows.put(moved)
      // A new published version on another trigger removes the schedule.
      await t.flows.put(makeFlow('webhook', {}, { id: 's1' }))
      expect(await t.schedules()).toEqual([])
      await t.flows.put(moved)
      await t.flows.remove(moved)
      expect(await t.schedules()).toEqual([])
      await t.clock.advance(2 * hour)
      expect(t.runs.calls).toEqual([])
    } finally {
      await t.close()
    }
  })

  it('registers every active schedule flow at start-up, of every project, and skips inactive ones', async () => {
    const t = await setup(Date.UTC(2026, 0, 1), [
      makeFlow('schedule', { cron: '0 9 * * *' }, { id: 'a', projectId: 'p1' }),
      makeFlow('schedule', { cron: '0 10 * * *' }, { id: 'b', projectId: 'p2' }),
      makeFlow('schedule', { cron: '0 11 * * *' }, { id: 'c', status: 'inactive' }),
    ])
    try {
      expect((await t.schedules()).sort()).toEqual(['flow:a 0 9 * * * UTC', 'flow:b 0 10 * * * UTC'])
      await t.clock.advance(day)
      expect(t.runs.calls.map((call) => `${call.flow.projectId}/${call.flow.id}`)).toEqual(['p1/a', 'p2/b'])
    } finally {
      await t.close()
    }
  })

  it('drops a stale schedule at its tick (the flow was deactivated where this instance did not hear it) and starts nothing', async () => {
    const flow = makeFlow('schedule', { cron: '0 * * * *' }, { id: 'gone' })
    const t = await setup(Date.UTC(2026, 0, 1), [flow])
    try {
      expect(await t.schedules()).toEqual(['flow:gone 0 * * * * UTC'])
      // Changed behind the listeners' back: the lookup now has it inactive, nobody was told.
      t.flows.replaceQuietly({ ...flow, status: 'inactive' })
      await t.clock.advance(hour)
      expect(t.runs.calls).toEqual([])
      expect(await t.schedules()).toEqual([])
    } finally {
      await t.close()
    }
  })

  it('logs a tick whose run cannot start (a quota) and keeps the schedule', async () => {
    const t = await setup(Date.UTC(2026, 0, 1), [makeFlow('schedule', { cron: '0 * * * *' }, { id: 'q' })])
    try {
      t.runs.failStartWith(new AppError('rate_limited', 'Runs per hour: 500 of 500'))
      await t.clock.advance(hour)
      expect(t.runs.calls).toEqual([])
      t.runs.failStartWith(null)
      await t.clock.advance(hour)
      expect(t.ticks()).toEqual(['2026-01-01T02:00:00.000Z'])
      expect(await t.schedules()).toEqual(['flow:q 0 * * * * UTC'])
    } finally {
      await t.close()
    }
  })
})
