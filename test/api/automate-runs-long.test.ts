import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock, type ManualClock } from '../../src/lib/clock-manual.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * The long-run case of issue 26, on a manual clock (time moves only when the test advances it): a flow of
 * seven 25 s delays with timeout_ms 400,000 runs to completion, a second run queued behind it on the
 * sequential flow completes too, and `cleanup-stale`, called every 10 s of it, reaps neither. Before leases
 * (decision 054) the reaper failed the live run as orphaned at 2 minutes, by its age.
 */
const BASE = '/api/v1/automate'
let clock: ManualClock
let server: TestServer
let owner: Account

const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, ...(body === undefined ? {} : { body }) })

async function ok(reply: Promise<Reply>, status = 200): Promise<any> {
  const done = await reply
  expect(done.status, done.text).toBe(status)
  return done.body
}

beforeAll(async () => {
  clock = createManualClock(Date.UTC(2026, 5, 1, 9))
  // In-process queue and slots, whose timers follow the app clock; sessions outlive the simulated hours.
  server = await startServer({ REDIS_URL: '', SESSION_TTL_SECONDS: String(30 * 24 * 3600) }, { clock })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

describe('a run longer than the old 2-minute cut-off', () => {
  it('seven 25 s delays (timeout 400 s) and a run queued behind them both complete; cleanup-stale reaps neither', {
    timeout: 120_000,
  }, async () => {
    // The project allows runs of up to 400 s (maxExecutionMs caps every flow's timeout_ms; 30 s by default).
    await ok(call('PATCH', `${BASE}/quotas`, { maxExecutionMs: 400_000 }))
    const operations = Array.from({ length: 7 }, (_, i) => ({ key: `wait${i}`, type: 'delay', config: { ms: 25_000 } }))
    const created = await ok(
      call('POST', `${BASE}/flows`, {
        name: 'Long',
        triggerType: 'manual',
        triggerConfig: {},
        operations,
        options: { timeout_ms: 400_000, concurrency: 'sequential' },
      }),
      201,
    )
    const flowId = created.data.id as string
    await ok(call('POST', `${BASE}/flows/${flowId}/publish`, { changeSummary: 'v1' }))
    await ok(call('PATCH', `${BASE}/flows/${flowId}/status`, { status: 'active' }))
    const first = (await ok(call('POST', `${BASE}/flows/${flowId}/execute`, {}), 202)).data
    const second = (await ok(call('POST', `${BASE}/flows/${flowId}/execute`, {}), 202)).data
    expect([first.status, second.status]).toEqual(['running', 'pending'])

    const statusOf = async (runId: string) =>
      (await ok(call('GET', `${BASE}/runs/${runId}`))).data as { status: string; stepLogs: unknown[]; error: unknown }
    const reaped: number[] = []
    let sawBothActiveAt = 0
    const start = clock.now()
    // 10 simulated seconds at a time, letting the runs' I/O settle in between, for at most 12 minutes.
    while (clock.now() - start < 12 * 60_000) {
      await clock.advance(10_000)
      await new Promise((resolve) => setTimeout(resolve, 40))
      reaped.push((await ok(call('POST', `${BASE}/runs/cleanup-stale`))).reaped as number)
      const [a, b] = await Promise.all([statusOf(first.runId), statusOf(second.runId)])
      if (a.status === 'running' && b.status === 'pending' && clock.now() - start > 130_000)
        sawBothActiveAt = clock.now() - start
      if (![a.status, b.status].some((s) => s === 'running' || s === 'pending')) break
    }
    // Past two minutes the first was still running and the second still waiting, and nothing was reaped.
    expect(sawBothActiveAt).toBeGreaterThan(130_000)
    expect(reaped.every((n) => n === 0)).toBe(true)
    const [a, b] = await Promise.all([statusOf(first.runId), statusOf(second.runId)])
    expect(a).toMatchObject({ status: 'completed', error: null })
    expect(a.stepLogs).toHaveLength(7)
    expect(b).toMatchObject({ status: 'completed', error: null })
    expect(b.stepLogs).toHaveLength(7)
  })
})
