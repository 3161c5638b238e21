import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../../lib/clock-manual.js'
import { testContext } from '../test-context.js'
import { delay } from './delay.js'

const safe = (config: Record<string, unknown>) => delay.configSchema.safeParse(config).success

describe('delay', () => {
  it('waits on the run clock and outputs waitedMs', async () => {
    const clock = createManualClock(0)
    const { ctx } = testContext({}, { clock })
    let done = false
    const waiting = delay.run(delay.configSchema.parse({ ms: 500 }), ctx).then((out) => ((done = true), out))
    await clock.advance(499)
    expect(done).toBe(false)
    await clock.advance(1)
    expect(await waiting).toEqual({ waitedMs: 500 })
  })
  it('waits 0 ms at once', async () => {
    const { ctx } = testContext({}, { clock: createManualClock(0) })
    expect(await delay.run(delay.configSchema.parse({ ms: 0 }), ctx)).toEqual({ waitedMs: 0 })
  })
  it('ends when the run is aborted (timeout, cancel)', async () => {
    const controller = new AbortController()
    const { ctx } = testContext({}, { clock: createManualClock(0), signal: controller.signal })
    const waiting = delay.run(delay.configSchema.parse({ ms: 20_000 }), ctx)
    controller.abort(new Error('cancelled'))
    await expect(waiting).rejects.toThrow('cancelled')
  })
  it('ms is an integer 0-25000, 1000 by default; a numeric string is taken', () => {
    expect(delay.configSchema.parse({})).toEqual({ ms: 1000 })
    expect(safe({ ms: -1 })).toBe(false)
    expect(safe({ ms: 0 })).toBe(true)
    expect(safe({ ms: 25_000 })).toBe(true)
    expect(safe({ ms: 25_001 })).toBe(false)
    expect(safe({ ms: 1.5 })).toBe(false)
    expect(delay.configSchema.parse({ ms: '25000' })).toEqual({ ms: 25_000 })
    expect(safe({ ms: '25001' })).toBe(false)
    expect(safe({ ms: 'soon' })).toBe(false)
  })
})
