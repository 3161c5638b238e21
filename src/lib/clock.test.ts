import { setTimeout as realSleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { held, runClockContract } from './clock-contract.js'
import { createManualClock } from './clock-manual.js'
import { busyTicker, systemClock } from './clock.js'

runClockContract('system', () => ({ clock: systemClock, elapse: (ms) => realSleep(ms) }))
runClockContract('manual', () => {
  const clock = createManualClock(1_700_000_000_000)
  return { clock, elapse: (ms) => clock.advance(ms) }
})

const timeouts = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

describe('system clock', () => {
  it('a sleep longer than Node’s timer limit (2^31 - 1 ms) does not end early', async () => {
    const controller = new AbortController()
    let ended = false
    const sleeping = systemClock.sleep(2 ** 31 + 10, controller.signal).then(
      () => void (ended = true),
      () => 'aborted',
    )
    await realSleep(30)
    expect(ended).toBe(false)
    controller.abort()
    expect(await sleeping).toBe('aborted')
  })

  it('a run that outlasts its period is not overlapped by the next', async () => {
    const gate = held()
    let runs = 0
    const ticker = systemClock.every(5, async () => {
      runs++
      if (runs === 1) await gate.hold()
    })
    await gate.reached
    await realSleep(50)
    expect(runs).toBe(1)
    gate.release()
    while (runs < 2) await realSleep(5)
    await ticker.stop()
  })

  it('an every or after timer holds no process open; a sleep does, until it ends', async () => {
    const before = timeouts()
    const ticker = systemClock.every(60_000, () => {})
    const cancel = systemClock.after(60_000, () => {})
    expect(timeouts()).toBe(before)
    cancel()
    const controller = new AbortController()
    const sleeping = systemClock.sleep(60_000, controller.signal).catch(() => {})
    expect(timeouts()).toBe(before + 1)
    controller.abort()
    await sleeping
    await ticker.stop()
    expect(timeouts()).toBe(before)
  })
})

describe('manual clock', () => {
  it('jump moves time at once, as a suspended machine: what fell due fires late, each timer once', async () => {
    const clock = createManualClock(0)
    const fired: string[] = []
    clock.after(10, () => void fired.push(`after at ${clock.now()}`))
    const ticker = clock.every(20, () => void fired.push(`tick at ${clock.now()}`))
    await clock.jump(100)
    expect(fired).toEqual(['after at 100', 'tick at 100'])
    expect(clock.now()).toBe(100)
    await clock.advance(20)
    expect(fired).toEqual(['after at 100', 'tick at 100', 'tick at 120'])
    await ticker.stop()
  })

  it('stands still until advanced; advance fires due timers in time order and moves time to the end', async () => {
    const clock = createManualClock(1000)
    const order: string[] = []
    void clock.sleep(30).then(() => order.push(`sleep 30 at ${clock.now()}`))
    void clock.sleep(10).then(() => order.push(`sleep 10 at ${clock.now()}`))
    const ticker = clock.every(20, () => void order.push(`tick at ${clock.now()}`))
    expect(clock.pending).toBe(3)
    await clock.advance(9)
    expect(order).toEqual([])
    expect(clock.now()).toBe(1009)
    await clock.advance(41)
    expect(order).toEqual(['sleep 10 at 1010', 'tick at 1020', 'sleep 30 at 1030', 'tick at 1040'])
    expect(clock.now()).toBe(1050)
    expect(clock.seconds()).toBe(1)
    await ticker.stop()
    expect(clock.pending).toBe(0)
  })

  it('the next tick counts from the end of a run (fixed delay): exactly as many runs as fit', async () => {
    const clock = createManualClock(0)
    const at: number[] = []
    const ticker = clock.every(10_000, async () => {
      at.push(clock.now())
    })
    await clock.advance(35_000)
    expect(at).toEqual([10_000, 20_000, 30_000])
    await ticker.stop()
  })

  it('a run is awaited by advance, so what it wrote is there when advance resolves', async () => {
    const clock = createManualClock(0)
    const swept: number[] = []
    const ticker = clock.every(600_000, async () => {
      await new Promise((resolve) => setImmediate(resolve))
      swept.push(clock.seconds())
    })
    await clock.advance(600_000)
    expect(swept).toEqual([600])
    await ticker.stop()
  })

  it('code woken by a sleep runs before time moves on, so a loop of sleeps keeps pace', async () => {
    const clock = createManualClock(0)
    const woke: number[] = []
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100)
        woke.push(clock.now())
      }
    })()
    await clock.advance(1000)
    expect(woke).toEqual([100, 200, 300])
  })

  it('advance waits for a run in progress: time does not move past it', async () => {
    const clock = createManualClock(0)
    const gate = held()
    let runs = 0
    const ticker = clock.every(10, async () => {
      runs++
      if (runs === 1) await gate.hold()
    })
    let advanced = false
    const advancing = clock.advance(100).then(() => void (advanced = true))
    await gate.reached
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    expect({ advanced, now: clock.now(), runs }).toEqual({ advanced: false, now: 10, runs: 1 })
    gate.release()
    await advancing
    expect({ now: clock.now(), runs }).toEqual({ now: 100, runs: 10 })
    await ticker.stop()
  })

  it('refuses a negative advance and one started while another runs', async () => {
    const clock = createManualClock(0)
    await expect(clock.advance(-1)).rejects.toThrow(RangeError)
    const gate = held()
    const ticker = clock.every(10, () => gate.hold())
    const first = clock.advance(10)
    await gate.reached
    await expect(clock.advance(10)).rejects.toThrow('another advance')
    gate.release()
    await first
    await ticker.stop()
  })
})

describe('busy ticker', () => {
  it('runs every period while busy, holds no timer while idle, and starts again on wake', async () => {
    const clock = createManualClock(1_700_000_000_000)
    let work = 2
    let runs = 0
    const ticker = busyTicker(
      clock,
      100,
      () => {
        runs++
        work--
      },
      () => work > 0,
    )
    // Nothing woke it: no timer, however long time moves on.
    await clock.advance(10_000)
    expect([runs, clock.pending]).toEqual([0, 0])
    ticker.wake()
    ticker.wake()
    expect(clock.pending).toBe(1)
    await clock.advance(1_000)
    // Two runs (work 2 → 0), then idle: no third run and no timer left.
    expect([runs, clock.pending]).toEqual([2, 0])
    work = 1
    ticker.wake()
    await clock.advance(100)
    expect(runs).toBe(3)
    ticker.wake()
    await ticker.stop()
    await clock.advance(1_000)
    expect([runs, clock.pending]).toEqual([3, 0])
  })

  it('a wake during a run does not overlap it; the run that ends re-arms only while busy', async () => {
    const clock = createManualClock(1_700_000_000_000)
    const gate = held()
    let runs = 0
    const ticker = busyTicker(
      clock,
      10,
      async () => {
        runs++
        if (runs === 1) await gate.hold()
      },
      () => runs < 3,
    )
    ticker.wake()
    const advancing = clock.advance(10)
    await gate.reached
    ticker.wake()
    expect(clock.pending).toBe(0)
    gate.release()
    await advancing
    await clock.advance(1_000)
    expect(runs).toBe(3)
    await ticker.stop()
  })
})
