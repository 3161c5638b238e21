import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  linearMemoryBytes,
  machineAdmissionLimits,
  perScriptOverheadBytes,
  reservationBytes,
} from '../../src/lib/sandbox/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { sampleProcess, threadCpuReadable } from '../support/process-sampler.js'
import { AUTOMATE } from './automate-support.js'

/**
 * A script's limits are the limits (issue 25, finding 3 and the script part of finding 7), over real HTTP
 * through POST /scripts/:id/test, measured on this process (the test server runs in it):
 *
 * - CPU: the run ends at max_cpu_ms within ±10% (the answer's `cpuMs`, the worker thread's CPU time up to
 *   the stop), even when the time goes into long builtin calls ('x'.repeat(1e6), big.split('')). Checked
 *   against the OS too (Linux): the CPU time of the worker thread that ran it, read from its schedstat
 *   every 5 ms (up to 5 ms may be missed at its end) until the thread is gone, so it also holds the
 *   thread's own ending after it was terminated: measured 10-14 ms for a worker that had finished, allowed
 *   `teardownMs`. The stop is the server thread's timer: on a loaded machine that thread may be scheduled
 *   late, and the worker computes meanwhile (measured up to 14 ms of CPU at load average 12 on two
 *   cores), allowed `schedulingMs` above the 10%.
 * - Memory: the process's RSS grows by at most the limit plus 8 MiB of WebAssembly headroom plus the
 *   per-script constant (decision 047), and, for scripts started together, by at most that times the
 *   number the admission lets run together (min(scripts, slots, budget ÷ reservation)).
 *
 * These are the one place tests assert figures that depend on time (the issue asks for them): CPU time,
 * never wall time, and the documented tolerances. Each test starts with an idle worker ready (a trivial
 * run first), so what it measures is the script, not a worker starting.
 */
const MiB = 1024 * 1024
const teardownMs = 30
const schedulingMs = 20
const sampleMs = 5
/** Asserts `cpuMs` ends at `limitMs` within the bound's ±10%, with the allowances above (`sampled`: read by sampleProcess). */
function expectAtLimit(cpuMs: number, limitMs: number, sampled = false): void {
  expect(cpuMs).toBeGreaterThanOrEqual(limitMs * 0.9 - (sampled ? sampleMs : 0))
  expect(cpuMs).toBeLessThanOrEqual(limitMs * 1.1 + schedulingMs + (sampled ? teardownMs : 0))
}
const hog = "const a = []; for (;;) a.push('x'.repeat(1e6))"
const splitter = "const big = 'ab'.repeat(2e5); let n = 0; for (;;) n += big.split('').length"

let server: TestServer
let owner: Account
beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

let names = 0
async function saved(code: string, limits: { max_cpu_ms: number; max_memory_mb: number }): Promise<string> {
  const created = await server.request('POST', `${AUTOMATE}/scripts`, {
    token: owner.token,
    body: { name: `limits ${++names}`, code, ...limits },
  })
  expect(created.status, created.text).toBe(201)
  return created.body.data.id as string
}
const test = async (id: string) => {
  const reply = await server.request('POST', `${AUTOMATE}/scripts/${id}/test`, { token: owner.token, body: {} })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data as { status: string; error?: { code: string }; cpuMs: number }
}
/** Leaves `count` idle workers ready (each run after a bound was hit ends its worker). */
async function warm(count = 1): Promise<void> {
  const id = await saved('return 1', { max_cpu_ms: 1000, max_memory_mb: 64 })
  const runs = await Promise.all(Array.from({ length: count }, () => test(id)))
  for (const run of runs) expect(run.status).toBe('completed')
}

/** Runs a script that must end at its CPU bound; answers its reported CPU time and the CPU time its worker thread used. */
async function cpuBound(code: string, maxCpuMs: number, maxMemoryMb: number) {
  await warm()
  const id = await saved(code, { max_cpu_ms: maxCpuMs, max_memory_mb: maxMemoryMb })
  const sampler = sampleProcess(sampleMs)
  const result = await test(id)
  const sample = await sampler.stop()
  expect(result).toMatchObject({ status: 'failed', error: { code: 'script_cpu_limit' } })
  return { reported: result.cpuMs, thread: Math.max(0, ...sample.endedThreadsCpuMs), sample }
}

describe('the CPU bound holds inside builtin calls', () => {
  it("'x'.repeat(1e6) pushed in a loop, max_cpu_ms 500 (memory 256 MB): ends script_cpu_limit at 500 ms of CPU ±10%", async () => {
    const { reported, thread, sample } = await cpuBound(hog, 500, 256)
    expectAtLimit(reported, 500)
    if (threadCpuReadable) expectAtLimit(thread, 500, true)
    expect(sample.rssPeak - sample.rssBefore).toBeLessThanOrEqual(reservationBytes(256 * MiB))
  })
  it('big.split("") in a loop, max_cpu_ms 100: ends script_cpu_limit near 100 ms of CPU (±10%)', async () => {
    const { reported, thread } = await cpuBound(splitter, 100, 64)
    expectAtLimit(reported, 100)
    if (threadCpuReadable) expectAtLimit(thread, 100, true)
  })
})

describe('the memory bound holds for the sum of small allocations', () => {
  it("'x'.repeat(1e6) pushed in a loop with the defaults (64 MB, 5000 ms): ends script_memory_limit, RSS under 64 MB + 8 MiB + the constant", async () => {
    await warm()
    const id = await saved(hog, { max_cpu_ms: 5000, max_memory_mb: 64 })
    const sampler = sampleProcess()
    const result = await test(id)
    const sample = await sampler.stop()
    expect(result).toMatchObject({ status: 'failed', error: { code: 'script_memory_limit' } })
    // It ended at the memory bound, long before its CPU bound (before: 8.6 s of CPU and 2.25 GB).
    expect(result.cpuMs).toBeLessThan(5000)
    expect(sample.rssPeak - sample.rssBefore).toBeLessThanOrEqual(linearMemoryBytes(64 * MiB) + perScriptOverheadBytes)
    // After the run its worker is gone with its memory: the process is back near where it was.
    expect(process.memoryUsage.rss() - sample.rssBefore).toBeLessThanOrEqual(perScriptOverheadBytes)
    expect((await server.request('GET', '/health')).status).toBe(200)
  })
  it('eight at once: each ends script_memory_limit, RSS grows by at most (scripts running together) × (64 MB + 8 MiB + the constant)', async () => {
    const { slots, budgetBytes } = machineAdmissionLimits(reservationBytes(256 * MiB))
    const together = Math.min(8, slots, Math.max(1, Math.floor(budgetBytes / reservationBytes(64 * MiB))))
    await warm(Math.min(2, together))
    const id = await saved(hog, { max_cpu_ms: 5000, max_memory_mb: 64 })
    const sampler = sampleProcess()
    const results = await Promise.all(Array.from({ length: 8 }, () => test(id)))
    const sample = await sampler.stop()
    for (const result of results)
      expect(result).toMatchObject({ status: 'failed', error: { code: 'script_memory_limit' } })
    expect(sample.rssPeak - sample.rssBefore).toBeLessThanOrEqual(together * reservationBytes(64 * MiB))
    expect((await server.request('GET', '/health')).status).toBe(200)
  }, 90_000) // eight runs of about 0.5 s of CPU each, on a machine that may be shared
})
