import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { afterAll, describe, expect, it } from 'vitest'
import { createChildPool } from './pool.js'

// The pool over a child that follows instructions (test/support/child-pool-fixture.ts): answers, timeouts,
// deaths, and that one child's end is never another job's.
const pool = createChildPool({
  entry: new URL('../../../test/support/child-pool-fixture.ts', import.meta.url),
  size: 2,
  heapMb: 64,
})
afterAll(() => pool.close())

const run = (parts: unknown[], partMs = 5000) => pool.run(parts, { parts: parts.length, partMs })

describe('child pool', () => {
  it('answers each part of a job, in a child with an empty environment', async () => {
    expect(await run([{ echo: 1 }, { echo: { a: [1, 'x'] } }, { env: true }])).toEqual([
      { ok: true, value: 1 },
      { ok: true, value: { a: [1, 'x'] } },
      { ok: true, value: [] },
    ])
  })
  it('runs more jobs than it has children, each to its own answer, and reuses its children', async () => {
    const before = pool.stats().spawned
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => run([{ sleepMs: 20, then: i }, { pid: true }])),
    )
    expect(answers.map((a) => a[0])).toEqual([0, 1, 2, 3, 4, 5].map((value) => ({ ok: true, value })))
    expect(
      new Set(
        answers.map((a) => {
          const pid = a[1]!
          return pid.ok ? pid.value : null
        }),
      ).size,
    ).toBeLessThanOrEqual(2)
    expect(pool.stats().spawned - before).toBeLessThanOrEqual(2)
  })
  it('gives every part its own time: parts each within it pass, one over it ends its child', async () => {
    expect(
      await run(
        [
          { sleepMs: 150, then: 'a' },
          { sleepMs: 150, then: 'b' },
          { sleepMs: 150, then: 'c' },
        ],
        400,
      ),
    ).toEqual([
      { ok: true, value: 'a' },
      { ok: true, value: 'b' },
      { ok: true, value: 'c' },
    ])
    const spawned = pool.stats().spawned
    expect(await run([{ echo: 'first' }, { hang: true }, { echo: 'never' }], 300)).toEqual([
      { ok: true, value: 'first' },
      { ok: false, reason: 'timeout' },
      { ok: false, reason: 'skipped' },
    ])
    // The hung child was killed and a fresh one started in its place; the next jobs run.
    expect(pool.stats().spawned).toBe(spawned + 1)
    const after = await Promise.all([run([{ echo: 1 }]), run([{ echo: 2 }])])
    expect(after).toEqual([[{ ok: true, value: 1 }], [{ ok: true, value: 2 }]])
  })
  it('a child that dies mid-job fails that job only; the job beside it and the next one answer', async () => {
    const [dying, beside] = await Promise.all([
      run([{ echo: 1 }, { exit: 3 }, { echo: 2 }]),
      run([{ sleepMs: 200, then: 'beside' }]),
    ])
    expect(dying).toEqual([
      { ok: true, value: 1 },
      { ok: false, reason: 'crashed' },
      { ok: false, reason: 'skipped' },
    ])
    expect(beside).toEqual([{ ok: true, value: 'beside' }])
    expect(await run([{ echo: 'next' }])).toEqual([{ ok: true, value: 'next' }])
  })
  it('a child out of memory ends as memory, and the pool goes on', async () => {
    expect(await run([{ oom: true }], 20_000)).toEqual([{ ok: false, reason: 'memory' }])
    expect(await run([{ echo: 'after' }])).toEqual([{ ok: true, value: 'after' }])
  })
})

describe('child pool turns', () => {
  it('a job waiting for its turn ends unavailable when its signal aborts; closing ends the rest', async () => {
    const small = createChildPool({
      entry: new URL('../../../test/support/child-pool-fixture.ts', import.meta.url),
      size: 1,
      heapMb: 64,
    })
    const busy = small.run([{ sleepMs: 300, then: 'busy' }], { parts: 1, partMs: 5000 })
    const controller = new AbortController()
    const aborted = small.run([{ echo: 'x' }], { parts: 1, partMs: 5000, signal: controller.signal })
    const closedOut = small.run([{ echo: 'y' }], { parts: 1, partMs: 5000 })
    controller.abort()
    expect(await aborted).toEqual([{ ok: false, reason: 'unavailable' }])
    expect(small.stats().waiting).toBe(1)
    small.close()
    expect(await closedOut).toEqual([{ ok: false, reason: 'unavailable' }])
    expect((await busy)[0]).toMatchObject({ ok: false })
  })
})

describe('child pool and its server', () => {
  it('a child computing when its server is killed (SIGKILL) does not outlive it', async () => {
    const tsx = createRequire(import.meta.url)
      .resolve('tsx/package.json')
      .replace(/package\.json$/, 'dist/esm/index.mjs')
    const script = new URL('../../../test/support/child-pool-orphan.ts', import.meta.url).pathname
    const stdout = await new Promise<string>((resolve) =>
      execFile(process.execPath, ['--import', tsx, script], (_err, out) => resolve(out)),
    )
    const { value: pid } = JSON.parse(stdout.trim()) as { value: number }
    const alive = () => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    // The child's watchdog looks for its parent every 500 ms.
    for (let i = 0; i < 50 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(alive()).toBe(false)
  })
})
