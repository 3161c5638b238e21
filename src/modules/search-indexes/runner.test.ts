import { describe, expect, it } from 'vitest'
import { createLoggers } from '../../lib/log.js'
import { principals } from '../../lib/principal.js'
import { createBuildRunner } from './runner.js'

const { log } = createLoggers('silent')

describe('createBuildRunner', () => {
  it("runs builds of one index one at a time; the same caller's waiting requests share the next build", async () => {
    const started: string[] = []
    const gates: (() => void)[] = []
    const runner = createBuildRunner<string>({
      log,
      build: (actor) => {
        started.push(actor.reason ?? '')
        return new Promise((resolve) => gates.push(() => resolve(`built by ${actor.reason}`)))
      },
    })
    const a = principals.system('p1', 'a')
    const b = principals.system('p1', 'b')
    const first = runner.request(a, 'p1', 'ix')
    const second = runner.request(a, 'p1', 'ix')
    const third = runner.request(a, 'p1', 'ix')
    await Promise.resolve()
    expect(started).toEqual(['a'])
    gates.shift()!()
    expect(await first).toBe('built by a')
    await new Promise((r) => setImmediate(r))
    // The two waiting requests share one build (it starts after the first ended, so it sees later writes).
    expect(started).toEqual(['a', 'a'])
    gates.shift()!()
    expect(await second).toBe('built by a')
    expect(await third).toBe('built by a')
    // Another caller's request is a build of its own.
    const other = runner.request(b, 'p1', 'ix')
    await new Promise((r) => setImmediate(r))
    expect(started).toEqual(['a', 'a', 'b'])
    gates.shift()!()
    expect(await other).toBe('built by b')
    await runner.settled()
  })

  it('a failed build rejects its requests and the next one still runs', async () => {
    let n = 0
    const runner = createBuildRunner<number>({
      log,
      build: async () => (++n === 1 ? Promise.reject(new Error('boom')) : n),
    })
    const failed = runner.request(principals.system('p1', 'a'), 'p1', 'ix')
    const next = runner.request(principals.system('p1', 'b'), 'p1', 'ix')
    await expect(failed).rejects.toThrow('boom')
    expect(await next).toBe(2)
  })
})
