import { describe, expect, it } from 'vitest'
import { createAdmission, machineAdmissionLimits } from './admission.js'

// The rule: a script starts when a slot is free and its reservation fits the budget beside those running
// (alone, it always fits); first come, first served.
const MB = 1024 * 1024

describe('createAdmission', () => {
  const rows: { name: string; limits: { slots: number; budgetBytes: number }; requests: number[]; started: number }[] =
    [
      {
        name: 'slots bound the count',
        limits: { slots: 2, budgetBytes: 10_000 * MB },
        requests: [100, 100, 100, 100],
        started: 2,
      },
      {
        name: 'the budget bounds the sum',
        limits: { slots: 8, budgetBytes: 300 * MB },
        requests: [100, 100, 100, 100],
        started: 3,
      },
      {
        name: 'one larger than the budget runs alone',
        limits: { slots: 8, budgetBytes: 300 * MB },
        requests: [500, 100],
        started: 1,
      },
      {
        name: 'nobody overtakes a script that does not fit yet',
        limits: { slots: 8, budgetBytes: 300 * MB },
        requests: [200, 200, 50],
        started: 1,
      },
    ]
  for (const row of rows) {
    it(row.name, async () => {
      const admission = createAdmission(row.limits)
      const started: number[] = []
      const entered = row.requests.map((mb, i) => admission.enter(mb * MB).then((ok) => ok && started.push(i)))
      await Promise.resolve()
      expect(admission.state()).toMatchObject({ running: row.started, waiting: row.requests.length - row.started })
      // Each leave lets the next in line start, in order, until all have run.
      for (let i = 0; i < row.requests.length; i++) {
        while (started.length <= i) await new Promise((resolve) => setTimeout(resolve, 1))
        admission.leave(row.requests[i]! * MB)
      }
      await Promise.all(entered)
      expect(started).toEqual(row.requests.map((_, i) => i))
      expect(admission.state()).toEqual({ running: 0, reservedBytes: 0, waiting: 0 })
    })
  }
  it('an abort while waiting gives up the place, and the ones behind it move up', async () => {
    const admission = createAdmission({ slots: 1, budgetBytes: 1000 * MB })
    expect(await admission.enter(10 * MB)).toBe(true)
    const controller = new AbortController()
    const first = admission.enter(10 * MB, controller.signal)
    const second = admission.enter(10 * MB)
    controller.abort()
    expect(await first).toBe(false)
    admission.leave(10 * MB)
    expect(await second).toBe(true)
    expect(admission.state()).toMatchObject({ running: 1, waiting: 0 })
  })
})

describe('machineAdmissionLimits', () => {
  it('gives at least two slots and a budget of at least one reservation of the largest limit', () => {
    const limits = machineAdmissionLimits(10 * 1024 * MB)
    expect(limits.slots).toBeGreaterThanOrEqual(2)
    expect(limits.budgetBytes).toBeGreaterThanOrEqual(10 * 1024 * MB)
  })
})
