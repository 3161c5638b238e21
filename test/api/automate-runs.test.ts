import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send, startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { serve, type Running } from '../support/serve-process.js'
import { startSibling } from '../support/sibling.js'
import { accountWithGrants } from './collections-support.js'

/**
 * The runs API over real HTTP (automation spec "Runs", execute and test; issue 15 items 5 and 8), on SQLite
 * and PostgreSQL: every endpoint, status transition and error; two instances on PostgreSQL + Redis (a
 * cancel through B stops the run on A, the concurrency limit holds across both); a SIGKILL mid-run and a
 * restart that resumes the run (decision 054). The executor's rules one by one: executor.test.ts;
 * the engine against the database in process: automate-runs-engine.test.ts.
 */
const BASE = '/api/v1/automate'
const redisUrl = process.env.TEST_REDIS_URL

const threeSteps = [
  { key: 'a', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body.n}}' } },
  { key: 'b', type: 'math', config: { operation: 'sum', values: ['{{$steps.a}}', 3] } },
  { key: 'c', type: 'condition', config: { rules: { field: '$steps.b.result', operator: 'gt', value: 4 } } },
]
const delay = (ms: number) => [{ key: 'wait', type: 'delay', config: { ms } }]

type Request = (
  method: string,
  path: string,
  options?: { token?: string; body?: unknown },
) => Promise<{ status: number; body: any; text: string; headers: Headers }>

/** Creates a flow, publishes it and (unless `draft`) activates it; answers its id. */
async function flowOf(
  request: Request,
  token: string,
  operations: unknown[],
  options: Record<string, unknown> = {},
  draft = false,
): Promise<string> {
  const created = await request('POST', `${BASE}/flows`, {
    token,
    body: { name: 'Runs test', triggerType: 'manual', triggerConfig: {}, operations, options },
  })
  expect(created.status, created.text).toBe(201)
  const id = created.body.data.id as string
  if (draft) return id
  const published = await request('POST', `${BASE}/flows/${id}/publish`, { token, body: { changeSummary: 'test' } })
  expect(published.status, published.text).toBe(200)
  const active = await request('PATCH', `${BASE}/flows/${id}/status`, { token, body: { status: 'active' } })
  expect(active.status, active.text).toBe(200)
  return id
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('runs API', () => {
  let server: TestServer
  let owner: Account
  let reader: Account
  let request: Request
  const count = async (table: string) =>
    Number(
      (
        await server.app.registry.system.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  const run = async (runId: string) => (await request('GET', `${BASE}/runs/${runId}`, { token: owner.token })).body.data
  const finished = (runId: string) =>
    until(
      () => run(runId),
      (r) => r && !['pending', 'running'].includes(r.status),
      `run ${runId} to end`,
    )

  beforeAll(async () => {
    server = await startServer()
    request = (method, path, options) => server.request(method, path, options)
    owner = await signUpOwner(server)
    reader = await accountWithGrants(server, owner.token, [{ resource: 'system/automate', action: 'read' }])
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('execute answers 202 with the run, which completes with every step logged; the flow counts it', async () => {
    const flowId = await flowOf(request, owner.token, threeSteps)
    const started = await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token, body: { n: 2 } })
    expect(started.status, started.text).toBe(202)
    expect(started.body.data).toEqual({
      runId: expect.stringMatching(/^[0-9a-f]{32}$/),
      flowId,
      status: 'running',
      startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    const done = await finished(started.body.data.runId)
    expect(done).toMatchObject({ status: 'completed', error: null, flowId, version: 1 })
    expect(done.stepLogs.map((s: any) => [s.key, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
    ])
    expect(done.stepLogs[1]).toMatchObject({
      input: { operation: 'sum', values: [2, 3] },
      output: { result: 5 },
      durationMs: expect.any(Number),
    })
    expect(done.actingAs).toEqual({ kind: 'user', userId: owner.id, roleId: expect.any(String), cappedBy: null })
    const flow = await until(
      () => request('GET', `${BASE}/flows/${flowId}`, { token: owner.token }),
      (r) => r.body.data.runCount === 1,
      'the run counted',
    )
    expect(flow.body.data).toMatchObject({ runCount: 1, errorCount: 0, lastRunAt: expect.any(String) })
  })

  it('execute: 409 for a draft or inactive flow, 404 for a missing one, 403 without execute, 401 anonymous', async () => {
    const draft = await flowOf(request, owner.token, threeSteps, {}, true)
    const refused = await request('POST', `${BASE}/flows/${draft}/execute`, { token: owner.token })
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body.error).toBe('conflict')
    const active = await flowOf(request, owner.token, threeSteps)
    expect(
      (await request('PATCH', `${BASE}/flows/${active}/status`, { token: owner.token, body: { status: 'inactive' } }))
        .status,
    ).toBe(200)
    expect((await request('POST', `${BASE}/flows/${active}/execute`, { token: owner.token })).status).toBe(409)
    expect((await request('POST', `${BASE}/flows/nope/execute`, { token: owner.token })).status).toBe(404)
    expect((await request('POST', `${BASE}/flows/${active}/execute`, { token: reader.token })).status).toBe(403)
    expect((await request('POST', `${BASE}/flows/${active}/execute`)).status).toBe(401)
  })

  it('test dry-runs the draft: steps with output and duration, and nothing written anywhere', async () => {
    const flowId = await flowOf(
      request,
      owner.token,
      [
        ...threeSteps,
        { key: 'note', type: 'log', config: { message: 'n={{$trigger.body.n}} {{$trigger.body.none}}' } },
      ],
      {},
      true,
    )
    const tables = ['flow_runs', 'flow_step_logs', 'audit_log']
    const before = await Promise.all(tables.map(count))
    const flowBefore = (await request('GET', `${BASE}/flows/${flowId}`, { token: owner.token })).body.data
    const reply = await request('POST', `${BASE}/flows/${flowId}/test`, { token: owner.token, body: { n: 2 } })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ runId: expect.any(String), status: 'completed', dryRun: true })
    const input = expect.anything()
    expect(reply.body.data.steps).toEqual([
      { key: 'a', type: 'set_variable', status: 'completed', input, output: 2, durationMs: expect.any(Number) },
      { key: 'b', type: 'math', status: 'completed', input, output: { result: 5 }, durationMs: expect.any(Number) },
      {
        key: 'c',
        type: 'condition',
        status: 'completed',
        input,
        output: { result: true, branch: null, outputs: {} },
        durationMs: expect.any(Number),
      },
      {
        key: 'note',
        type: 'log',
        status: 'completed',
        input,
        output: expect.anything(),
        durationMs: expect.any(Number),
      },
    ])
    // Each step's input is its config with the templates applied.
    expect(reply.body.data.steps[3].input.message).toBe('n=2 ')
    expect(reply.body.data.logs).toContainEqual(
      expect.objectContaining({
        step: 'note',
        level: 'warn',
        message: expect.stringContaining('{{$trigger.body.none}}'),
      }),
    )
    expect(await Promise.all(tables.map(count))).toEqual(before)
    expect((await request('GET', `${BASE}/flows/${flowId}`, { token: owner.token })).body.data).toMatchObject({
      runCount: flowBefore.runCount,
      lastRunAt: flowBefore.lastRunAt,
    })
    expect((await request('POST', `${BASE}/flows/${flowId}/test`, { token: reader.token })).status).toBe(403)
    expect((await request('POST', `${BASE}/flows/nope/test`, { token: owner.token })).status).toBe(404)
  })

  it('lists runs (page, limit, status, flow_id), per flow too, reads one, and refuses bad paging', async () => {
    const flowId = await flowOf(request, owner.token, threeSteps)
    const ids: string[] = []
    for (let i = 0; i < 3; i++)
      ids.push(
        (await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token, body: { n: i } })).body.data
          .runId,
      )
    for (const id of ids) await finished(id)
    const page = await request('GET', `${BASE}/runs?flow_id=${flowId}&limit=2`, { token: reader.token })
    expect(page.status, page.text).toBe(200)
    expect(page.body).toMatchObject({ total: 3, page: 1, limit: 2, hasMore: true })
    expect(page.body.data.map((r: any) => r.runId)).toEqual([ids[2], ids[1]])
    const second = await request('GET', `${BASE}/runs?flow_id=${flowId}&limit=2&page=2&status=completed`, {
      token: reader.token,
    })
    expect(second.body).toMatchObject({ total: 3, hasMore: false, data: [{ runId: ids[0] }] })
    expect(
      (await request('GET', `${BASE}/runs?flow_id=${flowId}&status=failed`, { token: reader.token })).body.total,
    ).toBe(0)
    const ofFlow = await request('GET', `${BASE}/flows/${flowId}/runs`, { token: reader.token })
    expect(ofFlow.body).toMatchObject({ total: 3, page: 1, limit: 25 })
    expect((await request('GET', `${BASE}/flows/nope/runs`, { token: reader.token })).status).toBe(404)
    expect((await request('GET', `${BASE}/runs/${ids[0]}`, { token: reader.token })).body.data.stepLogs).toHaveLength(3)
    expect((await request('GET', `${BASE}/runs/nope`, { token: reader.token })).status).toBe(404)
    for (const bad of ['limit=101', 'limit=0', 'page=0', 'status=done'])
      expect((await request('GET', `${BASE}/runs?${bad}`, { token: reader.token })).status).toBe(400)
    expect((await request('GET', `${BASE}/runs`)).status).toBe(401)
    // The deprecated alias answers the same, with its Deprecation header.
    const alias = await request('GET', `/api/automate/runs?flow_id=${flowId}`, { token: reader.token })
    expect(alias.status).toBe(200)
    expect(alias.body.total).toBe(3)
    expect(alias.headers.get('deprecation')).toBeTruthy()
  })

  it('deletes a run with its step logs (delete permission); 404 after', async () => {
    const flowId = await flowOf(request, owner.token, threeSteps)
    const runId = (await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token, body: { n: 1 } }))
      .body.data.runId
    await finished(runId)
    expect((await request('DELETE', `${BASE}/runs/${runId}`, { token: reader.token })).status).toBe(403)
    const deleted = await request('DELETE', `${BASE}/runs/${runId}`, { token: owner.token })
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body).toEqual({ success: true })
    expect((await request('GET', `${BASE}/runs/${runId}`, { token: owner.token })).status).toBe(404)
    expect((await request('DELETE', `${BASE}/runs/${runId}`, { token: owner.token })).status).toBe(404)
    const logs = await server.app.registry.system.db
      .selectFrom('flow_step_logs')
      .select('run_id')
      .where('run_id', '=', runId)
      .execute()
    expect(logs).toEqual([])
  })

  it('cancel: a running run mid-delay turns cancelled at once and frees its place; 404 once terminal or missing', async () => {
    const flowId = await flowOf(request, owner.token, delay(20_000))
    const first = (await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).body.data
    const second = (await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).body.data
    expect([first.status, second.status]).toEqual(['running', 'pending'])
    expect((await request('POST', `${BASE}/runs/${first.runId}/cancel`, { token: reader.token })).status).toBe(403)
    const cancelled = await request('POST', `${BASE}/runs/${first.runId}/cancel`, { token: owner.token })
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body).toEqual({ success: true })
    expect(await run(first.runId)).toMatchObject({
      status: 'cancelled',
      error: { code: 'cancelled' },
      finishedAt: expect.any(String),
    })
    // Sequential: the waiting run starts as soon as the place is free.
    await until(
      () => run(second.runId),
      (r) => r.status === 'running',
      'the pending run to start',
      3000,
    )
    expect((await request('POST', `${BASE}/runs/${second.runId}/cancel`, { token: owner.token })).status).toBe(200)
    expect((await request('POST', `${BASE}/runs/${first.runId}/cancel`, { token: owner.token })).status).toBe(404)
    expect((await request('POST', `${BASE}/runs/missing/cancel`, { token: owner.token })).status).toBe(404)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await run(first.runId)).status).toBe('cancelled')
  })

  it('timeout_ms: a run in a long delay ends timed_out', async () => {
    const flowId = await flowOf(request, owner.token, delay(10_000), { timeout_ms: 200 })
    const runId = (await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).body.data.runId
    expect(await finished(runId)).toMatchObject({ status: 'timed_out', error: { code: 'timed_out', step: 'wait' } })
  })

  it('cleanup-stale takes over runs whose lease lapsed (never a live one, however old) and answers how many', async () => {
    const flowId = await flowOf(request, owner.token, threeSteps)
    const projectId = server.app.defaultProject.id
    const db = server.app.registry.system.db
    // A real run's identity, so the run taken over acts as someone.
    const first = (await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token, body: { n: 1 } }))
      .body.data.runId
    await finished(first)
    const { acting } = await db
      .selectFrom('flow_runs')
      .select('acting')
      .where('id', '=', first)
      .executeTakeFirstOrThrow()
    const now = Date.now()
    const old = now - 3 * 60_000
    const row = (id: string, leaseUntil: number) => ({
      id,
      project_id: projectId,
      flow_id: flowId,
      version: 1,
      status: 'running',
      trigger_type: 'manual',
      trigger: '{"body":{"n":2}}',
      acting,
      created_at: old,
      started_at: old,
      depth: 0,
      instance_id: 'gone',
      lease_until: leaseUntil,
    })
    await db
      .insertInto('flow_runs')
      .values([row('stale-run', now - 1000), row('old-but-live', now + 60_000)])
      .execute()
    expect((await request('POST', `${BASE}/runs/cleanup-stale`, { token: reader.token })).status).toBe(403)
    const reply = await request('POST', `${BASE}/runs/cleanup-stale`, { token: owner.token })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, reaped: 1 })
    // It had begun no step: it runs again, in full.
    expect(await finished('stale-run')).toMatchObject({
      status: 'completed',
      stepLogs: [{ key: 'a' }, { key: 'b', output: { result: 5 } }, { key: 'c' }],
    })
    expect(await run('old-but-live')).toMatchObject({ status: 'running' })
    expect((await request('POST', `${BASE}/runs/cleanup-stale`, { token: owner.token })).body).toEqual({
      success: true,
      reaped: 0,
    })
    await db.deleteFrom('flow_runs').where('id', '=', 'old-but-live').execute()
  })

  it('quotas at run time: runs per hour refuses with 403 quota_exceeded; GET /quotas shows the usage', async () => {
    const flowId = await flowOf(request, owner.token, threeSteps)
    const usageNow = async () =>
      (await request('GET', `${BASE}/quotas`, { token: owner.token })).body.data.usage.runsThisHour as number
    // A deleted run still counted against the hour: the usage shown is the count the quota enforces.
    const runId = (await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).body.data.runId
    await finished(runId)
    const usage = await usageNow()
    expect(usage).toBeGreaterThan(0)
    expect((await request('DELETE', `${BASE}/runs/${runId}`, { token: owner.token })).status).toBe(200)
    expect(await usageNow()).toBe(usage)
    expect(
      (await request('PATCH', `${BASE}/quotas`, { token: owner.token, body: { maxRunsPerHour: usage + 1 } })).status,
    ).toBe(200)
    expect((await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).status).toBe(202)
    const refused = await request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body).toMatchObject({
      error: 'quota_exceeded',
      details: { quota: 'maxRunsPerHour', limit: usage + 1 },
    })
    expect(
      (await request('PATCH', `${BASE}/quotas`, { token: owner.token, body: { maxRunsPerHour: 500 } })).status,
    ).toBe(200)
  })
})

describe.runIf(testDatabaseUrl() && redisUrl)('runs on two instances (PostgreSQL + Redis)', () => {
  let a: TestServer
  let b: TestServer
  let owner: Account

  beforeAll(async () => {
    a = await startServer()
    b = await startSibling(a, {})
    owner = await signUpOwner(a)
  })
  afterAll(async () => {
    await b?.stop()
    await a?.stop()
  })

  it('a run cancelled through B stops on whichever instance runs it, and its place frees for both', async () => {
    const request: Request = (method, path, options) => a.request(method, path, options)
    const flowId = await flowOf(request, owner.token, delay(20_000))
    const first = (await a.request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).body.data
    const second = (await a.request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).body.data
    expect([first.status, second.status]).toEqual(['running', 'pending'])
    expect((await b.request('POST', `${BASE}/runs/${first.runId}/cancel`, { token: owner.token })).status).toBe(200)
    expect((await a.request('GET', `${BASE}/runs/${first.runId}`, { token: owner.token })).body.data.status).toBe(
      'cancelled',
    )
    await until(
      async () => (await b.request('GET', `${BASE}/runs/${second.runId}`, { token: owner.token })).body.data,
      (r) => r.status === 'running',
      'the waiting run to start',
      5000,
    )
    expect((await b.request('POST', `${BASE}/runs/${second.runId}/cancel`, { token: owner.token })).status).toBe(200)
    // Whichever instance ran the first run stopped it: its late end never overwrote the cancel.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const cancelled = (await b.request('GET', `${BASE}/runs/${first.runId}`, { token: owner.token })).body.data
    expect(cancelled.status).toBe('cancelled')
    // Step logs are written as each step ends: the delay it was in ended cancelled, never completed.
    expect(cancelled.stepLogs.filter((l: { status: string }) => l.status === 'completed')).toEqual([])
  })

  it('the concurrency limit holds across both instances', async () => {
    const request: Request = (method, path, options) => a.request(method, path, options)
    const flowId = await flowOf(request, owner.token, delay(200), { concurrency: 2 })
    const started = await Promise.all(
      [a, b, a, b, a, b].map(
        async (s) => (await s.request('POST', `${BASE}/flows/${flowId}/execute`, { token: owner.token })).body.data,
      ),
    )
    expect(started.filter((s) => s.status === 'running')).toHaveLength(2)
    let maxRunning = 0
    await until(
      async () => {
        const page = (await b.request('GET', `${BASE}/flows/${flowId}/runs`, { token: owner.token })).body
        maxRunning = Math.max(maxRunning, page.data.filter((r: any) => r.status === 'running').length)
        return page.data as any[]
      },
      (rows) => rows.length === 6 && rows.every((r) => r.status === 'completed'),
      'six runs across two instances',
      20_000,
    )
    expect(maxRunning).toBeLessThanOrEqual(2)
  })
})

// A real SIGKILL of a server process during a run (in a delay, a step without effects), then a restart on
// the same DATA_DIR (or PostgreSQL database): the run is taken over at start-up and resumes at its delay;
// nothing else is lost. Runs killed inside a step that writes: automate-runs-kill.test.ts.

describe('SIGKILL during a run, then a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-kill-run-'))
  let database: { url: string; drop: () => Promise<void> } | null = null
  let running: Running | null = null

  afterAll(async () => {
    if (running && running.child.exitCode === null) {
      const exited = new Promise((resolve) => running!.child.once('exit', resolve))
      running.child.kill('SIGKILL')
      await exited
    }
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('the killed run resumes at its unfinished step and completes; everything else is intact', {
    timeout: 120_000,
  }, async () => {
    if (testDatabaseUrl()) database = await createTestDatabase(testDatabaseUrl()!)
    // No REDIS_URL: embedded mode, where start-up takes over every run an earlier process left active.
    const env = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      PASSWORD_HASH_ITERATIONS: '1000',
      ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
    }
    running = await serve(env)
    const request: Request = (method, path, options) => send(running!.url, method, path, options)
    const signUp = await request('POST', '/api/auth/sign-up/email', {
      body: { email: 'kill@example.com', password: 'kill password', name: 'K' },
    })
    expect(signUp.status, signUp.text).toBe(200)
    const token = signUp.body.token as string
    const quick = await flowOf(request, token, threeSteps)
    const completedRun = (await request('POST', `${BASE}/flows/${quick}/execute`, { token, body: { n: 2 } })).body.data
      .runId
    await until(
      async () => (await request('GET', `${BASE}/runs/${completedRun}`, { token })).body.data.status,
      (s) => s === 'completed',
      'the quick run',
    )
    const slow = await flowOf(request, token, [
      ...delay(3000),
      { key: 'after', type: 'set_variable', config: { key: 'y', value: 1 } },
    ])
    const killedRun = (await request('POST', `${BASE}/flows/${slow}/execute`, { token })).body.data.runId
    await until(
      async () => (await request('GET', `${BASE}/runs/${killedRun}`, { token })).body.data.status,
      (s) => s === 'running',
      'the slow run to be running',
    )

    const exited = new Promise((resolve) => running!.child.once('exit', resolve))
    running.child.kill('SIGKILL')
    await exited
    running = await serve(env)

    const signIn = await request('POST', '/api/auth/sign-in/email', {
      body: { email: 'kill@example.com', password: 'kill password' },
    })
    expect(signIn.status, signIn.text).toBe(200)
    const fresh = signIn.body.token as string
    const resumed = await until(
      async () => (await request('GET', `${BASE}/runs/${killedRun}`, { token: fresh })).body.data,
      (r) => r.status !== 'running' && r.status !== 'pending',
      'the killed run to resume and end',
      20_000,
    )
    expect(resumed).toMatchObject({
      status: 'completed',
      finishedAt: expect.any(String),
      stepLogs: [
        { key: 'wait', status: 'completed' },
        { key: 'after', status: 'completed' },
      ],
    })
    const kept = (await request('GET', `${BASE}/runs/${completedRun}`, { token: fresh })).body.data
    expect(kept).toMatchObject({ status: 'completed' })
    expect(kept.stepLogs).toHaveLength(3)
    // The project's system-managed flows (decision 038) are listed too; the test's own are the others.
    const flows = (
      (await request('GET', `${BASE}/flows`, { token: fresh })).body.data as {
        id: string
        status: string
        system: boolean
      }[]
    ).filter((f) => !f.system)
    expect(flows.map((f) => [f.id, f.status]).sort()).toEqual(
      [
        [quick, 'active'],
        [slow, 'active'],
      ].sort(),
    )
    // The engine works on after the restart.
    const again = (await request('POST', `${BASE}/flows/${quick}/execute`, { token: fresh, body: { n: 1 } })).body.data
      .runId
    await until(
      async () => (await request('GET', `${BASE}/runs/${again}`, { token: fresh })).body.data.status,
      (s) => s === 'completed',
      'a run after the restart',
    )
  })
})
