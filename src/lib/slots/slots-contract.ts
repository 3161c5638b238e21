import { afterEach, describe, expect, it } from 'vitest'
import type { Slots } from './slots.js'

export interface SlotsFixture {
  /** Opens one instance, as one Plinth process would. */
  open(): Promise<Slots>
  /** True when two opened instances share places (Redis). */
  readonly shared: boolean
}

/** The behaviour every Slots implementation shares; time is passed in, so nothing here sleeps. */
export function runSlotsContract(name: string, fixture: SlotsFixture): void {
  describe(`Slots contract: ${name}`, () => {
    const opened: Slots[] = []
    const open = async () => {
      const slots = await fixture.open()
      opened.push(slots)
      return slots
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()))
    })
    let n = 0
    const key = (label: string) => `${label}-${Date.now()}-${n++}`
    const t0 = 1_000_000

    it('says whether other instances share it', async () => {
      expect((await open()).shared).toBe(fixture.shared)
    })

    it('admits up to the limit, refuses beyond it, and admits again once a place is released', async () => {
      const slots = await open()
      const k = key('flow')
      expect(await slots.acquire('a', [{ key: k, limit: 2 }], 10_000, t0)).toBe(true)
      expect(await slots.acquire('b', [{ key: k, limit: 2 }], 10_000, t0)).toBe(true)
      expect(await slots.acquire('c', [{ key: k, limit: 2 }], 10_000, t0)).toBe(false)
      expect(await slots.count(k, t0)).toBe(2)
      await slots.release('a', [k])
      expect(await slots.count(k, t0)).toBe(1)
      expect(await slots.acquire('c', [{ key: k, limit: 2 }], 10_000, t0)).toBe(true)
    })

    it('takes every claimed place or none', async () => {
      const slots = await open()
      const flow = key('flow')
      const project = key('project')
      expect(await slots.acquire('a', [{ key: project, limit: 1 }], 10_000, t0)).toBe(true)
      expect(
        await slots.acquire(
          'b',
          [
            { key: flow, limit: 5 },
            { key: project, limit: 1 },
          ],
          10_000,
          t0,
        ),
      ).toBe(false)
      expect(await slots.count(flow, t0)).toBe(0)
    })

    it('lets a holder claim again without taking a second place', async () => {
      const slots = await open()
      const k = key('flow')
      expect(await slots.acquire('a', [{ key: k, limit: 1 }], 10_000, t0)).toBe(true)
      expect(await slots.acquire('a', [{ key: k, limit: 1 }], 10_000, t0)).toBe(true)
      expect(await slots.count(k, t0)).toBe(1)
    })

    it('lets a lease that was not renewed expire, and keeps one that was', async () => {
      const slots = await open()
      const k = key('flow')
      await slots.acquire('dead', [{ key: k, limit: 2 }], 1000, t0)
      await slots.acquire('alive', [{ key: k, limit: 2 }], 1000, t0)
      expect(await slots.renew('alive', [k], 1000, t0 + 900)).toBe(true)
      expect(await slots.count(k, t0 + 1500)).toBe(1)
      expect(await slots.renew('dead', [k], 1000, t0 + 1500)).toBe(false)
      expect(await slots.acquire('new', [{ key: k, limit: 2 }], 1000, t0 + 1500)).toBe(true)
      expect(await slots.acquire('late', [{ key: k, limit: 2 }], 1000, t0 + 1500)).toBe(false)
    })

    it('ignores releases of what is not held, and refuses bad limits', async () => {
      const slots = await open()
      await slots.release('nobody', [key('x')])
      await expect(slots.acquire('a', [{ key: key('x'), limit: 0 }], 1000, t0)).rejects.toThrow(RangeError)
      await expect(slots.acquire('a', [{ key: key('x'), limit: 1 }], 0, t0)).rejects.toThrow(RangeError)
    })

    it(fixture.shared ? 'holds one limit across instances' : 'keeps instances apart', async () => {
      const a = await open()
      const b = await open()
      const k = key('project')
      expect(await a.acquire('run-1', [{ key: k, limit: 1 }], 10_000, t0)).toBe(true)
      expect(await b.acquire('run-2', [{ key: k, limit: 1 }], 10_000, t0)).toBe(!fixture.shared)
      await a.release('run-1', [k])
      expect(await b.acquire('run-3', [{ key: k, limit: 1 }], 10_000, t0)).toBe(fixture.shared)
    })

    it('refuses calls once closed', async () => {
      const slots = await open()
      await slots.close()
      await expect(slots.acquire('a', [], 1000, t0)).rejects.toThrow(/closed/)
    })
  })
}
