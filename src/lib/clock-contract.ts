import { describe, expect, it } from 'vitest'
import type { Clock } from './clock.js'

export interface ClockFixture {
  readonly clock: Clock
  /** Lets `ms` of the clock's time pass: real time for the system clock, `advance` for the manual one. */
  elapse(ms: number): Promise<void>
}

/** Lets time pass in steps of `stepMs` until `done` holds; fails after `maxSteps`. No timing is asserted. */
async function until(fixture: ClockFixture, done: () => boolean, stepMs = 10, maxSteps = 500): Promise<void> {
  for (let step = 0; !done(); step++) {
    if (step === maxSteps) throw new Error('the condition never held')
    await fixture.elapse(stepMs)
  }
}

/** A point a run reaches (`reached`) and waits at (`hold`) until the test lets it go on. */
export function held(): { reached: Promise<void>; hold(): Promise<void>; release(): void } {
  let reach: () => void = () => {}
  let release: () => void = () => {}
  const reached = new Promise<void>((resolve) => (reach = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  return {
    reached,
    hold: () => {
      reach()
      return released
    },
    release: () => release(),
  }
}

/** What every Clock does, run against the system clock and the manual one (clock.test.ts). */
export function runClockContract(name: string, make: () => ClockFixture): void {
  describe(`clock contract: ${name}`, () => {
    it('sleep resolves once its time has passed; 0 and less at once', async () => {
      const fixture = make()
      let done = false
      const sleeping = fixture.clock.sleep(20).then(() => void (done = true))
      await until(fixture, () => done)
      await sleeping
      await fixture.clock.sleep(0)
      await fixture.clock.sleep(-5)
    })

    it('sleep rejects with the signal’s reason when aborted, or aborted already', async () => {
      const { clock } = make()
      const controller = new AbortController()
      const sleeping = clock.sleep(60_000, controller.signal)
      const reason = new Error('flow timed out')
      controller.abort(reason)
      await expect(sleeping).rejects.toBe(reason)
      await expect(clock.sleep(10, controller.signal)).rejects.toBe(reason)
      await expect(clock.sleep(0, controller.signal)).rejects.toBe(reason)
    })

    it('after fires once when its time has passed, unless cancelled first', async () => {
      const fixture = make()
      const fired: string[] = []
      fixture.clock.after(15, () => void fired.push('kept'))
      const cancel = fixture.clock.after(10, () => void fired.push('cancelled'))
      cancel()
      fixture.clock.after(-1, () => void fired.push('at once'))
      await until(fixture, () => fired.length === 2)
      expect(fired.sort()).toEqual(['at once', 'kept'])
    })

    it('sleep refuses NaN', async () => {
      await expect(make().clock.sleep(Number.NaN)).rejects.toThrow(RangeError)
    })

    it('every runs again and again; a run that throws is reported and the schedule goes on', async () => {
      const fixture = make()
      let runs = 0
      const errors: unknown[] = []
      const ticker = fixture.clock.every(
        10,
        async () => {
          runs++
          if (runs === 1) throw new Error('first run fails')
          if (runs === 2) await Promise.reject(new Error('second run rejects'))
        },
        { onError: (err) => errors.push(err) },
      )
      await until(fixture, () => runs >= 4)
      await ticker.stop()
      expect(errors.map((e) => (e as Error).message)).toEqual(['first run fails', 'second run rejects'])
    })

    it('a reporter that throws does not end the schedule', async () => {
      const fixture = make()
      let runs = 0
      const ticker = fixture.clock.every(
        10,
        () => {
          runs++
          throw new Error('run')
        },
        {
          onError: () => {
            throw new Error('reporter')
          },
        },
      )
      await until(fixture, () => runs >= 3)
      await ticker.stop()
    })

    it('runs never overlap: the next run waits for the one in progress', async () => {
      const fixture = make()
      const gate = held()
      let active = 0
      let most = 0
      let runs = 0
      const ticker = fixture.clock.every(10, async () => {
        runs++
        active++
        most = Math.max(most, active)
        if (runs === 1) await gate.hold()
        active--
      })
      // Not awaited: the manual clock's advance waits for the run it started, which the gate holds.
      const passing = fixture.elapse(10)
      await gate.reached
      expect(runs).toBe(1)
      gate.release()
      await passing
      await until(fixture, () => runs >= 3)
      await ticker.stop()
      expect(most).toBe(1)
    })

    it('stop: nothing runs after it, and it waits for the run in progress', async () => {
      const fixture = make()
      const gate = held()
      let runs = 0
      let finished = false
      const ticker = fixture.clock.every(10, async () => {
        runs++
        await gate.hold()
        finished = true
      })
      const passing = fixture.elapse(10)
      await gate.reached
      let stopped = false
      const stopping = ticker.stop().then(() => void (stopped = true))
      await new Promise((resolve) => setImmediate(resolve))
      expect(stopped).toBe(false)
      gate.release()
      await stopping
      await passing
      expect(finished).toBe(true)
      for (let i = 0; i < 5; i++) await fixture.elapse(10)
      expect(runs).toBe(1)
      await ticker.stop()
    })

    it.each([0, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY])('every refuses %s ms', (ms) => {
      expect(() => make().clock.every(ms, () => {})).toThrow(RangeError)
    })

    it('seconds are whole seconds of now', () => {
      const { clock } = make()
      expect(clock.seconds()).toBe(Math.floor(clock.now() / 1000))
    })
  })
}
