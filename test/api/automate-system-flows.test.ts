import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock, type ManualClock } from '../../src/lib/clock-manual.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

/**
 * System-managed flows (issue 17 item 7, decision 038), on a server of its own on a manual clock (their
 * schedules tick only when the test advances time): every project has system_archival,
 * system_limit_check and system_monthly_summary installed, active and published; users see them and
 * pause them, and cannot edit, publish, delete or copy them; their runs act as the system. Archival
 * purges old soft-deleted records only; the limit check warns admins over the threshold only.
 */
const BASE = '/api/v1/automate'
const NOTES = '/api/v1/collections/notes/records'
let server: TestServer
let clock: ManualClock
let owner: Account
let admin: Account
let editor: Account
let flows: Record<string, any>

const call = (
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) })

async function systemFlows(token: string, headers?: Record<string, string>): Promise<Record<string, any>> {
  const reply = await call('GET', `${BASE}/flows`, token, undefined, headers)
  expect(reply.status, reply.text).toBe(200)
  return Object.fromEntries((reply.body.data as any[]).filter((f) => f.system).map((f) => [f.operations[0].type, f]))
}

/** Executes a flow as `token` and answers the finished run (with stepLogs). */
async function execute(token: string, flowId: string): Promise<any> {
  const started = await call('POST', `${BASE}/flows/${flowId}/execute`, token, {})
  expect(started.status, started.text).toBe(202)
  return finished(started.body.data.runId)
}

async function finished(runId: string): Promise<any> {
  const deadline = Date.now() + 30_000
  for (;;) {
    await clock.advance(0)
    const reply = await call('GET', `${BASE}/runs/${runId}`, owner.token)
    if (reply.body.data && !['pending', 'running'].includes(reply.body.data.status)) return reply.body.data
    if (Date.now() > deadline) throw new Error(`run did not end: ${reply.text}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Moves the clock to `at` (a schedule's tick) and waits until the flow's schedule has started `count` runs
 * in all and they have ended, before time moves on: a run's timeout is on the same clock, so a run still
 * going while the clock jumps hours would time out. Answers those runs, oldest first, with their steps.
 */
async function tickTo(at: number, flowId: string, count: number): Promise<any[]> {
  await clock.advance(at - clock.now())
  const deadline = Date.now() + 30_000
  for (;;) {
    await clock.advance(0)
    const reply = await call('GET', `${BASE}/runs?flow_id=${flowId}&limit=100`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    const runs = (reply.body.data as any[]).filter((r) => r.triggerType === 'schedule')
    if (runs.length >= count) return Promise.all(runs.reverse().map((r) => finished(r.runId)))
    if (Date.now() > deadline) throw new Error(`the schedule started ${runs.length} runs, not ${count}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function inbox(account: Account): Promise<any[]> {
  const reply = await call('GET', '/api/v1/notifications?limit=100', account.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

beforeAll(async () => {
  // Friday 30 January 2026, 12:00 UTC, near a month's end. The in-process queue: its ticks follow the app clock.
  clock = createManualClock(Date.UTC(2026, 0, 30, 12))
  // The r2-sql publish schedule ticks every minute: moved rarely, or a manual clock's advance of a day and a
  // half would step through every one of its 2,000 ticks (20 s and more on PostgreSQL, under load past 30).
  server = await startServer(
    { REDIS_URL: '', SESSION_TTL_SECONDS: String(60 * 24 * 3600) },
    { clock, r2Sql: { publishPattern: '0 0 1 1 *' } },
  )
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  editor = await createAccount(server, owner.token, { role: 'editor' })
  flows = await systemFlows(owner.token)
})
afterAll(async () => {
  await server?.stop()
})

describe('installed in every project', () => {
  it('the three system flows are listed to anyone who may read flows: active, published, scheduled, flagged system', async () => {
    expect(Object.keys(flows).sort()).toEqual(['system_archival', 'system_limit_check', 'system_monthly_summary'])
    for (const flow of Object.values(flows)) {
      expect(flow).toMatchObject({
        system: true,
        status: 'active',
        triggerType: 'schedule',
        publishedVersion: 1,
        createdBy: null,
      })
    }
    expect(flows.system_archival.triggerConfig).toEqual({ cron: '0 3 * * *', timezone: 'UTC' })
    const seen = await systemFlows(editor.token)
    expect(Object.keys(seen).sort()).toEqual(Object.keys(flows).sort())
    const detail = await call('GET', `${BASE}/flows/${flows.system_limit_check.id}`, editor.token)
    expect(detail.status, detail.text).toBe(200)
    expect(detail.body.data).toMatchObject({ system: true, publishedOperations: [{ type: 'system_limit_check' }] })
  })

  it('they do not count against the max-flows quota', async () => {
    expect((await call('GET', `${BASE}/quotas`, owner.token)).body.data.usage.flows).toBe(0)
  })

  it('a project created later gets them too', async () => {
    const project = await call('POST', '/api/v1/projects', owner.token, { name: 'second' })
    expect(project.status, project.text).toBe(201)
    const there = await systemFlows(owner.token, { 'x-project-id': project.body.data.id })
    expect(Object.keys(there).sort()).toEqual(['system_archival', 'system_limit_check', 'system_monthly_summary'])
    expect(Object.values(there).map((f) => f.id)).not.toContain(flows.system_archival.id)
  })
})

describe('read and pause only', () => {
  it('edit, delete, publish, rollback, duplicate and replace-by-import are refused with 409 system_flow_readonly', async () => {
    const id = flows.system_archival.id
    const attempts: [string, string, unknown][] = [
      ['PATCH', `${BASE}/flows/${id}`, { name: 'mine now' }],
      ['PATCH', `${BASE}/flows/${id}`, { operations: [{ key: 'x', type: 'log', config: { message: 'x' } }] }],
      ['DELETE', `${BASE}/flows/${id}`, undefined],
      ['POST', `${BASE}/flows/${id}/publish`, { changeSummary: 'x' }],
      ['POST', `${BASE}/flows/${id}/rollback/1`, undefined],
      ['POST', `${BASE}/flows/${id}/duplicate`, {}],
      [
        'POST',
        `${BASE}/flows/import?flowId=${id}`,
        { format: 'plinth-flow-v1', name: 'x', triggerType: 'manual', triggerConfig: {}, operations: [] },
      ],
      ['PATCH', `${BASE}/flows/${id}/status`, { status: 'draft' }],
    ]
    for (const [method, path, body] of attempts) {
      const reply = await call(method, path, owner.token, body)
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(409)
      expect(reply.body).toMatchObject({ error: 'system_flow_readonly', details: { system: 'system_archival' } })
    }
    const after = (await call('GET', `${BASE}/flows/${id}`, owner.token)).body.data
    expect(after).toMatchObject({
      name: flows.system_archival.name,
      currentVersion: 1,
      publishedVersion: 1,
      status: 'active',
      operations: [{ type: 'system_archival' }],
    })
  })

  it('pausing (inactive) and resuming (active) work', async () => {
    const id = flows.system_monthly_summary.id
    const paused = await call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'inactive' })
    expect(paused.status, paused.text).toBe(200)
    expect(paused.body.data).toMatchObject({ status: 'inactive', system: true })
    const resumed = await call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'active' })
    expect(resumed.body.data.status).toBe('active')
  })

  it('running one by hand needs manage: an editor (execute only) is refused', async () => {
    const reply = await call('POST', `${BASE}/flows/${flows.system_limit_check.id}/execute`, editor.token, {})
    expect(reply.status).toBe(403)
    expect(reply.body).toMatchObject({ error: 'forbidden' })
  })
})

describe('system_archival', () => {
  it('purges records soft-deleted longer ago than automate.archival_days, keeping recent ones and live ones', async () => {
    const collection = await call('POST', '/api/v1/collections', owner.token, {
      name: 'notes',
      fields: [{ name: 'title', type: 'text', required: true }],
    })
    expect(collection.status, collection.text).toBe(201)
    const ids: Record<string, string> = {}
    for (const title of ['live', 'old', 'recent']) {
      const made = await call('POST', NOTES, editor.token, { title })
      expect(made.status, made.text).toBe(201)
      ids[title] = made.body.id
    }
    expect((await call('PATCH', '/api/v1/settings', owner.token, { 'automate.archival_days': 1 })).status).toBe(200)
    expect((await call('DELETE', `${NOTES}/${ids.old}`, editor.token)).status).toBe(200)
    // The schedule's run at 03:00 on the 31st comes when "old" has been deleted 15 hours, and leaves it.
    const ticks = await tickTo(Date.UTC(2026, 0, 31, 3), flows.system_archival.id, 1)
    expect(ticks.map((r) => [r.status, r.stepLogs[0].output.purged])).toEqual([['completed', 0]])
    expect(ticks[0].actingAs).toEqual({ kind: 'system', userId: null, roleId: null, cappedBy: null })
    await tickTo(Date.UTC(2026, 0, 31, 6), flows.system_limit_check.id, 1)
    // 1 February, 00:00: "old" was deleted 36 hours ago.
    await clock.advance(Date.UTC(2026, 1, 1) - clock.now())
    expect((await call('DELETE', `${NOTES}/${ids.recent}`, editor.token)).status).toBe(200)

    const done = await execute(owner.token, flows.system_archival.id)
    expect(done.status, JSON.stringify(done)).toBe('completed')
    expect(done.stepLogs[0].output).toMatchObject({ days: 1, purged: 1, collections: { notes: 1 } })
    expect((await call('GET', `${NOTES}/${ids.old}?include_deleted=true`, owner.token)).status).toBe(404)
    const recent = await call('GET', `${NOTES}/${ids.recent}?include_deleted=true`, owner.token)
    expect(recent.status, recent.text).toBe(200)
    expect(recent.body.deleted_at).not.toBeNull()
    const live = await call('GET', `${NOTES}/${ids.live}`, owner.token)
    expect(live.status, live.text).toBe(200)
  })
})

describe('system_limit_check', () => {
  it('below the threshold, nobody is notified', async () => {
    const done = await execute(owner.token, flows.system_limit_check.id)
    expect(done.status, JSON.stringify(done)).toBe('completed')
    expect(done.stepLogs[0].output).toMatchObject({ threshold: 80, warnings: [], notified: 0 })
    expect((await inbox(owner)).filter((n) => n.title.startsWith('Automation quota'))).toEqual([])
  })

  it('over the threshold, each admin of the project is warned once (until read); others are not', async () => {
    expect((await call('PATCH', `${BASE}/quotas`, owner.token, { maxFlows: 2 })).status).toBe(200)
    for (const name of ['one', 'two']) {
      const made = await call('POST', `${BASE}/flows`, owner.token, {
        name,
        triggerType: 'manual',
        triggerConfig: {},
        operations: [],
      })
      expect(made.status, made.text).toBe(201)
    }
    const done = await execute(owner.token, flows.system_limit_check.id)
    expect(done.status, JSON.stringify(done)).toBe('completed')
    expect(done.stepLogs[0].output).toMatchObject({
      warnings: [{ quota: 'maxFlows', usage: 2, limit: 2, percent: 100 }],
      notified: 2,
    })
    for (const who of [owner, admin]) {
      const warnings = (await inbox(who)).filter((n) => n.title.startsWith('Automation quota'))
      expect(warnings, who.email).toEqual([
        expect.objectContaining({
          title: 'Automation quota maxFlows at 100%',
          type: 'error',
          flowId: flows.system_limit_check.id,
        }),
      ])
    }
    expect(await inbox(editor)).toEqual([])
    // Again while the warnings are unread: nothing more.
    const again = await execute(owner.token, flows.system_limit_check.id)
    expect(again.stepLogs[0].output).toMatchObject({ notified: 0 })
    expect((await inbox(owner)).filter((n) => n.title.startsWith('Automation quota'))).toHaveLength(1)
  })
})

describe('system_monthly_summary', () => {
  it("on the 1st, the schedule sends the admins last month's runs and records", async () => {
    // 1 February 08:00 UTC: the tick summarises January, where the schedule ran archival and the
    // limit check once each (31 January); the runs set off by hand above were on 1 February.
    const ticks = await tickTo(Date.UTC(2026, 1, 1, 8), flows.system_monthly_summary.id, 1)
    expect(ticks).toHaveLength(1)
    expect(ticks[0].status, JSON.stringify(ticks[0])).toBe('completed')
    const output = ticks[0].stepLogs[0].output
    // Of the three notes made in January, one was purged and one is soft-deleted: one is still there.
    expect(output).toMatchObject({ month: '2026-01', records: { created: 1, byCollection: { notes: 1 } }, notified: 2 })
    expect(output.runs).toEqual({ total: 2, byStatus: { completed: 2 } })
    for (const who of [owner, admin]) {
      const summary = (await inbox(who)).filter((n) => n.title === 'Summary of 2026-01')
      expect(summary, who.email).toEqual([
        expect.objectContaining({
          type: 'info',
          message: '2 flow runs (0 failed); 1 record created and still there (notes: 1).',
        }),
      ])
    }
    expect(await inbox(editor)).toEqual([])
  })
})
