import { describe, expect, it } from 'vitest'
import { runIsolated } from './isolated.js'
import { SandboxFetchError, type SandboxOptions } from './quickjs.js'

// The worker-thread runner: the same results as runInSandbox (quickjs.test.ts has the escapes), plus what
// only a thread gives: the server's event loop runs while a script computes, and a hog is terminated.
const base = {
  input: { n: 2 },
  context: {},
  cpuMs: 1000,
  timeoutMs: 20_000,
  memoryBytes: 32 * 1024 * 1024,
} satisfies Omit<SandboxOptions, 'code'>
const run = (code: string, options: Partial<SandboxOptions> = {}) => runIsolated({ ...base, ...options, code })

describe('runIsolated', () => {
  it('answers as runInSandbox: a value, an exception, the CPU bound, the memory bound', async () => {
    expect(await run('console.log("hi"); return input.n * 21')).toMatchObject({
      ok: true,
      value: 42,
      logs: [{ level: 'info', message: 'hi' }],
    })
    expect(await run('throw new TypeError("nope")')).toMatchObject({ ok: false, kind: 'thrown', name: 'TypeError' })
    expect(await run('while (true) {}', { cpuMs: 200 })).toMatchObject({ ok: false, kind: 'cpu' })
    expect(await run('return new ArrayBuffer(1024 * 1024 * 1024).byteLength')).toMatchObject({
      ok: false,
      kind: 'memory',
    })
  })
  it('the worker sees no environment of the server, even by name', async () => {
    expect(await run('return [typeof process, typeof require]')).toMatchObject({
      ok: true,
      value: ['undefined', 'undefined'],
    })
  })
  it('fetch goes through the parent: its answer, or its refusal code', async () => {
    const fetch = async (request: { url: string }) => {
      if (request.url.includes('refuse')) throw new SandboxFetchError('domain_not_allowed', 'no')
      return { url: request.url, status: 200, statusText: 'OK', headers: {}, body: '{"via":"parent"}' }
    }
    const code =
      'let refused; try { await fetch("https://refuse.test/") } catch (e) { refused = e.code } return [await (await fetch("https://ok.test/")).json(), refused]'
    expect(await run(code, { fetch })).toMatchObject({ ok: true, value: [{ via: 'parent' }, 'domain_not_allowed'] })
  })
  it("keeps the server's event loop running while a script computes", async () => {
    let ticks = 0
    const ticker = setInterval(() => ticks++, 1)
    const result = await run('const end = Date.now() + 300; while (Date.now() < end) {} return "done"')
    clearInterval(ticker)
    expect(result).toMatchObject({ ok: true, value: 'done' })
    expect(ticks).toBeGreaterThan(0)
  })
  it('stops a script whose builtin calls outrun the interrupt checks at its CPU bound (±10%), and runs the next one', async () => {
    // Each iteration is one long builtin call: the interrupt handler is asked too rarely to stop it in
    // time; the parent's watchdog ends it. The one figure asserted: CPU time, the bound's own tolerance.
    for (const hog of [
      'const a = []; for (;;) a.push("x".repeat(1e6) + a.length)',
      'const big = "ab".repeat(2e5); let n = 0; for (;;) n += big.split("").length',
    ]) {
      const result = await run(hog, { cpuMs: 200, timeoutMs: 20_000, memoryBytes: 256 * 1024 * 1024 })
      expect(result).toMatchObject({ ok: false, kind: 'cpu' })
      expect(result.cpuMs).toBeGreaterThanOrEqual(180)
      // +20 ms: this thread's timer may fire late on a loaded machine (test/api/automate-script-limits.test.ts).
      expect(result.cpuMs).toBeLessThanOrEqual(220 + 20)
    }
    expect(await run('return 1')).toMatchObject({ ok: true, value: 1 })
  })
  it('an abort of the signal stops a computing script', async () => {
    const controller = new AbortController()
    const running = run('for (;;) {}', { cpuMs: 20_000, signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    expect(await running).toMatchObject({ ok: false, kind: 'aborted' })
  })
})

describe('runIsolated under load', () => {
  it('runs more scripts than it has turns for, each to its own answer', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => run(`return input.n * ${i}`)))
    expect(results.map((r) => (r.ok ? r.value : r.kind))).toEqual([0, 2, 4, 6, 8, 10])
  })
})
