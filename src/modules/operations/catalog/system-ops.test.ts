import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../../lib/clock-manual.js'
import type { Principal } from '../../../lib/principal.js'
import { testContext } from '../test-context.js'
import { systemArchival } from './system-archival.js'
import { systemLimitCheck } from './system-limit-check.js'
import { systemMonthlySummary } from './system-monthly-summary.js'

const now = Date.UTC(2026, 2, 15, 3)

/** Fake services for the system operations: notes with deleted_at, admins a and b. */
function fakes(options: { usage?: Record<string, number>; limits?: Record<string, number> } = {}) {
  const rows = [
    { id: 'live', deleted_at: null },
    { id: 'old', deleted_at: now / 1000 - 31 * 86_400 },
    { id: 'recent', deleted_at: now / 1000 - 29 * 86_400 },
  ]
  const sent: Record<string, unknown>[] = []
  const purged: string[] = []
  const services = {
    settings: { get: async () => 30 },
    collections: { visibleTo: async () => [{ name: 'notes' }] },
    records: {
      async list(_p: Principal, _name: string, query: { filter?: string; includeDeleted?: boolean }) {
        const cutoff = (JSON.parse(query.filter ?? '{}') as { deleted_at: { _lt: number } }).deleted_at._lt
        return { data: rows.filter((r) => !purged.includes(r.id) && r.deleted_at !== null && r.deleted_at < cutoff) }
      },
      aggregate: async () => ({ data: [{ count: 7 }] }),
    },
    dataTools: {
      bulk: {
        delete: async (_p: Principal, _n: string, ids: readonly string[], permanent: boolean) =>
          permanent ? (purged.push(...ids), ids.length) : 0,
      },
    },
    quotas: {
      get: async () => ({
        limits: { maxFlows: 10, maxRunsPerHour: 100, ...options.limits },
        usage: { flows: 1, runsThisHour: 1, ...options.usage },
      }),
    },
    runStats: {
      between: async (_p: Principal, from: number, to: number) => ({
        total: from === Date.UTC(2026, 1, 1) && to === Date.UTC(2026, 2, 1) ? 5 : -1,
        byStatus: { completed: 4, failed: 1 },
      }),
    },
    notifications: {
      adminIds: async () => ['a', 'b'],
      async send(_p: Principal, input: Record<string, unknown>) {
        sent.push(input)
        return { id: String(sent.length) }
      },
    },
  }
  return { services, sent, purged }
}

describe('system operations', () => {
  it('are flagged system, take {} as config', () => {
    for (const op of [systemArchival, systemLimitCheck, systemMonthlySummary]) {
      expect(op.system).toBe(true)
      expect(op.configSchema.safeParse({}).success).toBe(true)
      expect(op.configSchema.safeParse({ other: 1 }).success).toBe(false)
    }
  })

  it('system_archival purges permanently only what was soft-deleted before the cutoff', async () => {
    const { services, purged } = fakes()
    const { ctx } = testContext({}, { services, clock: createManualClock(now) })
    const out = await systemArchival.run({}, ctx)
    expect(purged).toEqual(['old'])
    expect(out).toEqual({
      days: 30,
      cutoff: new Date(now - 30 * 86_400_000).toISOString(),
      purged: 1,
      collections: { notes: 1 },
    })
  })

  it('system_limit_check: nothing under the threshold; at or over it, each admin warned with a dedupe key per quota', async () => {
    const quiet = fakes({ usage: { flows: 7 } })
    expect(
      await systemLimitCheck.run({ threshold: 80 }, testContext({}, { services: quiet.services }).ctx),
    ).toMatchObject({ warnings: [], notified: 0 })
    expect(quiet.sent).toEqual([])
    const busy = fakes({ usage: { flows: 8, runsThisHour: 120 } })
    const out = await systemLimitCheck.run({ threshold: 80 }, testContext({}, { services: busy.services }).ctx)
    expect(out).toMatchObject({
      warnings: [
        { quota: 'maxFlows', percent: 80 },
        { quota: 'maxRunsPerHour', percent: 120 },
      ],
      notified: 4,
    })
    expect(busy.sent.map((n) => [n.userId, n.type, n.dedupeKey])).toEqual([
      ['a', 'warning', 'system_limit_check:maxFlows'],
      ['b', 'warning', 'system_limit_check:maxFlows'],
      ['a', 'error', 'system_limit_check:maxRunsPerHour'],
      ['b', 'error', 'system_limit_check:maxRunsPerHour'],
    ])
  })

  it('system_monthly_summary covers the previous calendar month (UTC) and tells each admin', async () => {
    const { services, sent } = fakes()
    const out = await systemMonthlySummary.run({}, testContext({}, { services, clock: createManualClock(now) }).ctx)
    expect(out).toMatchObject({
      month: '2026-02',
      runs: { total: 5 },
      records: { created: 7, byCollection: { notes: 7 } },
      notified: 2,
    })
    expect(sent[0]).toMatchObject({
      userId: 'a',
      title: 'Summary of 2026-02',
      message: '5 flow runs (1 failed); 7 records created and still there (notes: 7).',
    })
  })
})
